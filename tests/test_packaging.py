"""Packaging: every package folder is installed, and none under a generic top-level name."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
SETUP = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_package_folder_is_listed_under_its_installed_name():
    folders = {name: Path(folder) for name, folder in SETUP["package-dir"].items()}
    folders["guard"] = Path("guard")
    found = set()
    for name, folder in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert found == set(SETUP["packages"])


def test_nothing_installs_or_imports_a_generic_top_level_name():
    assert not {p.split(".")[0] for p in SETUP["packages"]} & {"benchmarks", "graphs", "tests"}
    generic = re.compile(r"^\s*(?:from|import)\s+(?:benchmarks|graphs)\b", re.MULTILINE)
    offenders = [str(p.relative_to(ROOT)) for top in ("guard", "benchmarks", "graphs", "tests") for p in (ROOT / top).rglob("*.py")
                 if generic.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
