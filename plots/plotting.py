"""What every plot shares: matplotlib without a display, and `save`, which titles a plot with what it
shows and the host and date it came from, places the point labels and writes the PNG. The report's
plots (figures), the per-tensor histogram and the linkbed plot are saved with it; the collectives'
plot shares the matplotlib set-up."""
import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import labels  # noqa: E402
import results  # noqa: E402


def save(fig, ax, title, report, path, legend_outside=False):
    """Titles `ax` with `title` and the host and date, adds grid and legend (right of the axes with
    `legend_outside`), places the point labels once the layout is final, writes `path` (PNG)."""
    ax.set_title(f"{title}\n{results.host_label(report)}", fontsize=10)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        where = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0)} if legend_outside else {}
        ax.legend(fontsize=7, **where)
    fig.tight_layout()
    fig.canvas.draw()  # fixes the legend's place, which labels.place keeps clear
    labels.place(ax)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
