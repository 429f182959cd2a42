"""Run LangGraph's and LangChain's own tests with the guard swapped in, and count the failures.

    python tests/upstream/run.py                       # both suites, every mode
    python tests/upstream/run.py --suite langgraph --mode control --mode enforce
    python tests/upstream/run.py --check               # exit 1 when a count exceeds tests/upstream/limits.json

What it does: reads the installed versions of ``langgraph-prebuilt`` and ``langchain`` (nothing is
pinned by hand: it tests what pip resolved), downloads their sdists from the package index with
``pip download --no-binary :all:`` into a work folder (``--workdir``, default a fresh temp dir),
makes a virtual environment per suite on top of this interpreter's site-packages with the suites'
test dependencies (constrained to the installed langchain/langgraph/pydantic versions), and runs
``pytest`` there with ``-p guard_upstream_swap`` (``tests/upstream/guard_upstream_swap.py``) in
each mode: ``control`` (no guard; for LangChain a pass-through middleware in the guard's slot),
``observe``, ``enforce`` (schema-only policy) and ``default``. It prints, per suite and mode, the
failed, passed and errored counts and how many failures are not failures of the control. The
upstream tests are never copied into this repository. It downloads, so it is not part of the
offline test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import venv
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODES = ("control", "observe", "enforce", "default")


@dataclass(frozen=True)
class Suite:
    name: str
    package: str
    tests: str  # the tests to run, relative to the sdist root
    deps: tuple[str, ...]
    pytest_args: tuple[str, ...] = ()


SUITES = {
    "langgraph": Suite(
        "langgraph", "langgraph-prebuilt", "tests",
        ("pytest-mock", "syrupy", "langgraph-checkpoint-sqlite", "langgraph-checkpoint-postgres", "psycopg[binary]", "psycopg-pool"),
    ),
    "langchain": Suite(
        "langchain", "langchain", "tests/unit_tests/agents",
        ("pytest-mock", "syrupy>=5,<6", "toml", "blockbuster>=1.5.26,<1.6.0", "langchain-tests>=1.1.9,<2",
         "langchain-openai", "pytest-socket", "pytest-xdist"),
        ("-n", "auto"),  # 1,200 tests: pytest-xdist, as LangChain runs them
    ),
}


@dataclass
class Result:
    failed: set[str] = field(default_factory=set)
    passed: int = 0
    skipped: int = 0
    #: per test, what the guard decided in it other than clean allows (``guard_upstream_swap``)
    decisions: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict[str, int]:
        return {"failed": len(self.failed), "passed": self.passed, "skipped": self.skipped}


def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=False, text=True, **kw)  # type: ignore[call-overload]


def constraints(workdir: Path) -> Path:
    """The installed versions of the packages the upstream tests must not move."""
    path = workdir / "constraints.txt"
    keep = ("langchain", "langgraph", "pydantic", "pytest")
    lines = sorted(
        f"{d.metadata['Name']}=={d.version}"
        for d in metadata.distributions()
        if d.metadata["Name"] and d.metadata["Name"].lower().startswith(keep)
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def sdist(suite: Suite, workdir: Path) -> Path:
    version = metadata.version(suite.package)
    root = workdir / f"{suite.package.replace('-', '_')}-{version}"
    if root.exists():
        return root
    dl = workdir / "sdists"
    proc = run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                f"{suite.package}=={version}", "-d", str(dl)])
    if proc.returncode:
        raise SystemExit(f"could not download the sdist of {suite.package}=={version}")
    archive = next(dl.glob(f"{suite.package.replace('-', '_')}-{version}.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    return root


def environment(suite: Suite, workdir: Path) -> Path:
    env_dir = workdir / f"venv-{suite.name}"
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
        proc = run([str(python), "-m", "pip", "install", "-q", "-c", str(constraints(workdir)), *suite.deps])
        if proc.returncode:
            raise SystemExit(f"could not install the test dependencies of {suite.name}")
    return python


def junit(path: Path) -> Result:
    result = Result()
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        for prop in case.iter("property"):
            if prop.get("name") == "guard_decisions":
                result.decisions[test_id] = prop.get("value") or ""
        if case.find("failure") is not None or case.find("error") is not None:
            result.failed.add(test_id)
        elif case.find("skipped") is not None:
            result.skipped += 1
        else:
            result.passed += 1
    return result


def run_suite(suite: Suite, mode: str, root: Path, python: Path, workdir: Path, extra: list[str]) -> Result:
    report = workdir / f"{suite.name}-{mode}.xml"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([p for p in (str(HERE), str(root), os.environ.get("PYTHONPATH")) if p]),
        "GUARD_UPSTREAM_SUITE": suite.name,
        "GUARD_UPSTREAM_MODE": mode,
        "GUARD_UPSTREAM_POLICY": str(workdir / f"policy-{mode}.yaml"),
    }
    start = time.monotonic()
    run([str(python), "-m", "pytest", suite.tests, "-p", "guard_upstream_swap", "-p", "no:cacheprovider", "-p", "no:benchmark",
         "-q", "-o", "addopts=", "--junitxml", str(report), *suite.pytest_args, *extra],
        cwd=root, env=env, stdout=subprocess.DEVNULL if not os.environ.get("GUARD_UPSTREAM_VERBOSE") else None)
    print(f"{suite.name}/{mode}: {time.monotonic() - start:.0f} s", flush=True)
    return junit(report)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", action="append", choices=sorted(SUITES))
    parser.add_argument("--mode", action="append", choices=MODES)
    parser.add_argument("--workdir", type=Path, help="kept and reused between runs (sdists, venvs); default: a temp dir, removed at the end")
    parser.add_argument("--check", action="store_true", help="exit 1 when a count exceeds tests/upstream/limits.json")
    parser.add_argument("--list", action="store_true", help="print the failing tests beyond the control")
    parser.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return conform(args, args.workdir.resolve())
    workdir = Path(tempfile.mkdtemp(prefix="guard-upstream-"))
    try:
        return conform(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def conform(args: argparse.Namespace, workdir: Path) -> int:
    modes = args.mode or list(MODES)
    if "control" not in modes:
        modes = ["control", *modes]
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for name in args.suite or sorted(SUITES):
        suite = SUITES[name]
        root, python = sdist(suite, workdir), environment(suite, workdir)
        results = {mode: run_suite(suite, mode, root, python, workdir, args.pytest_args) for mode in modes}
        if not results["control"].passed:
            raise SystemExit(f"{name}: the control run passed no test; the environment is broken, nothing is measured")
        control = results["control"].failed
        counts[name] = {}
        for mode, result in results.items():
            beyond = sorted(result.failed - control)
            counts[name][mode] = {**result.summary(), "beyond_control": len(beyond)}
            if args.list and mode != "control":
                for test_id in beyond:
                    print(f"  {name}/{mode}: {test_id}  -- guard: {result.decisions.get(test_id, 'allow only')}")
    print(json.dumps({"versions": {s.package: metadata.version(s.package) for s in SUITES.values()}, "counts": counts}, indent=2))
    if args.check:
        limits = json.loads((HERE / "limits.json").read_text())
        over = [
            f"{suite}/{mode}: {c['beyond_control']} failures beyond the control > {limits[suite][mode]}"
            for suite, by_mode in counts.items()
            for mode, c in by_mode.items()
            if mode in limits.get(suite, {}) and c["beyond_control"] > limits[suite][mode]
        ]
        for line in over:
            print("REGRESSION", line)
        for suite, by_mode in counts.items():
            for mode, c in by_mode.items():
                if mode in limits.get(suite, {}) and c["beyond_control"] < limits[suite][mode]:
                    print(f"better than the limit: {suite}/{mode} {c['beyond_control']} < {limits[suite][mode]} (lower it in limits.json)")
        return 1 if over else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
