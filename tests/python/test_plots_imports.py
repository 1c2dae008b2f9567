"""The modules of plots/ import each other without a cycle (imports inside functions count too):
a cycle hides which module owns a piece, and breaks as soon as one side imports at load time."""
import ast
import os
import unittest

PLOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots")


def imports(directory):
    """{module: set of the modules of `directory` it imports, anywhere in its source}."""
    modules = {name[:-3] for name in os.listdir(directory) if name.endswith(".py")}
    graph = {}
    for module in modules:
        with open(os.path.join(directory, module + ".py")) as f:
            tree = ast.parse(f.read())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
        graph[module] = found & modules - {module}
    return graph


def cycle(graph):
    """One import cycle as a list of modules (first == last), or None."""
    state = {}

    def visit(module, path):
        state[module] = "open"
        for other in sorted(graph[module]):
            if state.get(other) == "open":
                return path[path.index(other):] + [other]
            if other not in state:
                found = visit(other, path + [other])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return None


class PlotsImports(unittest.TestCase):
    def test_plots_modules_import_each_other_without_a_cycle(self):
        graph = imports(PLOTS)
        self.assertIn("plotting", graph["figures"])
        self.assertIsNone(cycle(graph), "import cycle in plots/")

    def test_the_check_finds_a_cycle(self):
        self.assertEqual(cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}))


if __name__ == "__main__":
    unittest.main()
