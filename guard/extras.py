"""How to install one of this project's extras, written so that the command resolves to *this* project.

This project is not published on PyPI, and an unrelated package there is called ``guard``: a message
that says ``pip install 'guard[service]'`` would install that one. The command named here is instead
the one that reinstalls this project with the extra from where it was installed: its checkout, for
an editable or local install (``pip install -e '/path/to/checkout[service]'``), the same URL for one
installed from a VCS or archive URL, the source folder when running from a checkout that pip did
not record, and the checkout's relative form otherwise.
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "guard"


@cache
def _origin() -> tuple[str, bool] | None:
    """Where the installed distribution came from (PEP 610 ``direct_url.json``) and whether it is
    editable; None when pip did not record it (or the project is not installed)."""
    # Several may be found (a checkout's own ``guard.egg-info`` beside the install's metadata):
    # the first that records where it came from tells.
    text = next((t for d in metadata.distributions(name=DISTRIBUTION) if (t := d.read_text("direct_url.json"))), None)
    if not text:
        checkout = Path(__file__).resolve().parents[1]
        return (str(checkout), True) if (checkout / "pyproject.toml").is_file() else None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    url = data.get("url")
    if not isinstance(url, str):
        return None
    editable = bool((data.get("dir_info") or {}).get("editable"))
    if url.startswith("file://"):
        return unquote(urlsplit(url).path), editable
    if "vcs_info" in data:
        vcs = data["vcs_info"]
        return f"{vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id', '')}".rstrip("@"), False
    return url, False


def install_hint(extra: str) -> str:
    """``pip install -e '/work/guard[service]'``: the command that adds ``extra`` to this install."""
    origin = _origin()
    if origin is None:
        return f"pip install -e '.[{extra}]' (in this project's checkout)"
    where, editable = origin
    if "://" in where and not where.startswith("file://"):
        return f"pip install {shlex.quote(f'guard[{extra}] @ {where}')}"
    return f"pip install {'-e ' if editable else ''}{shlex.quote(f'{where}[{extra}]')}"
