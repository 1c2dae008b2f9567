# shellcheck shell=bash
# Debian kernels for the two-guest test bed (sourced by scripts/testbed/two-host-bed).
#   kernel_package [VERSION]  -> the linux-image package VERSION names, on stdout (status 1: none)
#       VERSION: empty (the current linux-image-amd64), a kernel release (6.1.0-50 or 6.1.0-50-amd64)
#       or a Debian version of linux-image-amd64 (6.1.176-1, the point release; 6.1.192-3, security)
#   fetch_kernel PACKAGE DIR  -> DIR/kroot (the unpacked package, with modules.dep) and DIR/vmlinuz
# Kernels are downloaded and unpacked, never installed on the host.

kernel_package() {
  local version=${1:-} depends_on=linux-image-amd64
  case $version in
    [0-9]*.[0-9]*.0-[0-9]*-amd64) echo "linux-image-$version"; return ;;
    [0-9]*.[0-9]*.0-[0-9]*) echo "linux-image-$version-amd64"; return ;;
    "") ;;
    *) depends_on="linux-image-amd64=$version" ;;
  esac
  apt-cache depends "$depends_on" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; found=1; exit} END {exit !found}'
}

# The kernel releases apt can fetch here, on one line, for error messages.
kernels_available() {
  apt-cache search --names-only '^linux-image-[0-9.]+-[0-9]+-amd64$' 2>/dev/null | awk '{print $1}' |
    sed 's/^linux-image-//' | sort -V | tr '\n' ' '
}

fetch_kernel() {
  local package=$1 dir=$2 release
  [[ -f $dir/vmlinuz && -d $dir/kroot ]] && return 0
  apt-cache show "$package" >/dev/null 2>&1 || return 1
  mkdir -p "$dir"
  rm -rf "$dir/kroot" "$dir"/*.deb
  (cd "$dir" && apt-get download -qq "$package" && dpkg -x "$package"_*.deb kroot && rm -f "$package"_*.deb) \
    >"$dir/download.log" 2>&1 || return 1
  release=$(ls "$dir/kroot/lib/modules")
  depmod -b "$dir/kroot" "$release"
  cp "$dir/kroot/boot/vmlinuz-$release" "$dir/vmlinuz"
  rm -f "$dir/initramfs.cpio.gz"
}
