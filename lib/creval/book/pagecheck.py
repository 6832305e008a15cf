"""What a reader's browser shows, checked: each page of a built site opened in headless Chromium, and a script
run in it that lists what a reader should never meet (issue 53):

- **overflow**: the page is wider than the window (something runs off the right edge);
- **repr**: a Python or JSON structure printed as text (``{'seed': 0}``, ``['a', 'b']``) outside code;
- **heading from data**: a heading that reads like a sentence (ends with a full stop, starts in lower case, or
  runs past :data:`LONG_HEADING` characters): a line of data or prose that Markdown made a heading;
- **figure**: a plotly figure with a cartesian axis pair but no title on its x or y axes, or whose plot area
  takes less than half of the figure's width (labels or a legend took the rest).

The script (``assets/pagecheck.js``) writes its findings into the page (``<pre id="creval-pagecheck">``) and
Chromium's ``--dump-dom`` hands the page back; nothing here needs a server or the network.
:func:`check_site` checks every page of a site; :func:`browser` finds Chromium (None when none is installed).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
WIDTH, HEIGHT = 1280, 2000
LONG_HEADING = 120
MARK = "creval-pagecheck"

ASSET = Path(__file__).with_name("assets") / "pagecheck.js"


def browser() -> str | None:
    """The headless browser's executable, or None when no Chromium is installed."""
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def check_page(page: Path, chromium: str | None = None, timeout: int = 180) -> list[dict]:
    """The problems (``{"kind", "what"}``) a reader meets on ``page``, as Chromium renders it at
    :data:`WIDTH` px. The page is checked from a copy beside it, so its relative links (plotly.js) resolve."""
    chromium = chromium or browser()
    if chromium is None:
        raise RuntimeError("no headless browser: install Debian's chromium (`apt-get install chromium`)")
    page = Path(page)
    text = page.read_text()
    probe = page.with_name(f".{page.stem}.pagecheck.html")
    script = "<script>\n" + ASSET.read_text().replace("LONG)", f"{LONG_HEADING})") + "</script>\n"
    probe.write_text(text.replace("</body>", script + "</body>", 1) if "</body>" in text else text + script)
    try:
        with tempfile.TemporaryDirectory() as profile:
            r = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
                                "--virtual-time-budget=15000", "--dump-dom", probe.as_uri()],
                               capture_output=True, text=True, timeout=timeout)
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(rf'<pre id="{MARK}">(.*?)</pre>', r.stdout, re.S)
    if not m:
        return [{"kind": "check", "what": f"the check did not run (exit {r.returncode}): {r.stderr[-300:]}"}]
    import html
    return json.loads(html.unescape(m.group(1)))


def site_pages(site: Path) -> list[Path]:
    """The pages a reader reads: the preface, the chapters and the appendices (not the item browsers)."""
    site = Path(site)
    return [p for p in [site / "index.html", *sorted((site / "chapters").glob("*.html")),
                        *sorted((site / "appendices").glob("*.html"))] if p.exists()]


def check_site(site: Path, chromium: str | None = None) -> dict[str, list[dict]]:
    """Every page of ``site`` with a problem: its path relative to the site, and the problems."""
    out = {}
    for page in site_pages(site):
        found = check_page(page, chromium)
        if found:
            out[str(page.relative_to(site))] = found
    return out
