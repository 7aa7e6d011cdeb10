"""The HTML report: self-contained, escaped, and rendered for real by headless Chromium."""
from __future__ import annotations

import html
import re
import subprocess

import numpy as np

from dbtest_helpers import EVIL_NAME, make_record
from dbtest_png import decode_png
from tunefarm.database import Database
from tunefarm.database import svg
from tunefarm.database.report import STATUS_COLORS, render_report, write_report
from tunefarm.runtime.measure_result import MeasureStatus

WORKLOAD_NAMES = ["dense_128x128x128", "relu_1024", EVIL_NAME]


def test_report_is_self_contained_and_escaped(study, tmp_path):
    db, _ = study
    text = open(write_report(db, tmp_path / "r.html"), encoding="utf-8").read()
    assert EVIL_NAME not in text  # never raw
    assert html.escape(EVIL_NAME) in text
    assert "<script" not in text.lower() and "<img" not in text.lower()
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text), "report must not load anything"
    assert "@import" not in text and "url(" not in text
    assert text.count("<svg") == 4 * 3  # four plots per workload
    for name in WORKLOAD_NAMES:
        assert html.escape(name) in text
    # traces are shown (escaped JSON) in the top-k tables; errors too
    assert "SamplePerfectTile" in text and "&lt;1&gt; &amp; more" in text
    assert "µs" in text and "trials / min" in text


def test_report_of_empty_and_failing_databases(tmp_path):
    db = Database(tmp_path / "e.sqlite")
    assert "0 workloads" in render_report(db)
    db.commit_workload("k", "only_failures", "{}", None)
    db.commit_workload("k2", "never_measured", "{}", None)
    db.commit_records([make_record("k", i, status=MeasureStatus.TIMEOUT) for i in range(3)])
    text = render_report(db)
    assert "no successful trials yet" in text and "no trials recorded" in text
    assert "timeout: 3 (100.0%)" in text


def test_ticks_are_round_numbers():
    assert svg.nice_ticks(0, 200) == [0, 50, 100, 150, 200]
    assert svg.log_ticks(3, 2000) == [10, 100, 1000]
    assert svg.log_ticks(300, 2000) == [500, 1000, 2000]
    assert svg.log_ticks(120, 180) and all(120 <= t <= 180 for t in svg.log_ticks(120, 180))
    assert svg.fmt(12345.6) == "12,346" and svg.fmt(0.00123) == "0.00123" and svg.fmt(150) == "150"


def _chromium(chromium: str, profile, *args: str) -> subprocess.CompletedProcess:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, timeout=90)


def test_report_renders_in_headless_chromium(study, tmp_path, chromium):
    db, _ = study
    page = write_report(db, tmp_path / "report.html")
    url = "file://" + page
    png = tmp_path / "shot.png"
    run = _chromium(chromium, tmp_path / "profile1", f"--screenshot={png}", "--dump-dom", "--window-size=1280,2000", url)
    assert png.exists(), run.stderr.decode(errors="replace")[-3000:]
    text = run.stdout.decode("utf-8")
    if "<html" not in text:  # older Chromium builds do one thing per run: dump the DOM separately
        run = _chromium(chromium, tmp_path / "profile2", "--dump-dom", "--window-size=1280,2000", url)
        assert run.returncode == 0, run.stderr.decode(errors="replace")[-3000:]
        text = run.stdout.decode("utf-8")
    assert "<html" in text

    # the DOM: every task's name (serialized escaped), plots, and no injected markup took effect
    assert "<svg" in text and "<circle" in text and "<path" in text
    for name in WORKLOAD_NAMES:
        assert html.escape(name, quote=False) in text, name
    assert 'data-pwned="1"' not in text and "<title>pwned</title>" not in text

    # the pixels: a real page, not a blank one; the plots' colours are on screen
    pixels = decode_png(png.read_bytes())
    assert pixels.shape[:2] == (2000, 1280)
    rgb = pixels[:, :, :3].reshape(-1, 3).astype(np.uint32)
    packed = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
    colours, counts = np.unique(packed, return_counts=True)
    assert len(colours) > 200, "screenshot is (nearly) blank"
    assert counts.max() < 0.9 * len(packed), "screenshot is one colour"

    def share(hex_colour: str) -> float:
        return float(np.count_nonzero(packed == int(hex_colour[1:], 16)) / len(packed))

    assert share(STATUS_COLORS["ok"]) > 0.001  # the status bar (an SVG rect) was painted
    assert share(svg.PALETTE[0]) > 0.0005  # the tuning curves / throughput bars were painted
