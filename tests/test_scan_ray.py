"""`scan --engine ray` on a Ray this test starts on the machine: the same rows, database
and --strict verdict as a local scan. Skipped where ray (the `ray` extra) is not installed."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.gen_scan import make_folder, samples
from streamscope.cli import main

ray = pytest.importorskip("ray", reason="ray is not installed (the ray extra)")
pytestmark = pytest.mark.slow  # (a Ray started: 5 s)

HAR = Path(__file__).resolve().parent / "fixtures" / "har" / "mitmproxy-three.har"


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield
    ray.shutdown()


@pytest.fixture
def folder(tmp_path) -> Path:
    into = tmp_path / "in"
    into.mkdir()
    for path in samples():
        shutil.copy(path, into / Path(path).name)
    shutil.copy(HAR, into / HAR.name)
    (into / "notes.txt").write_text("not a recording\n")
    make_folder(str(into / "generated"), 40)
    return into


def scan(*args: str):
    return CliRunner().invoke(main, ["scan", *args])


def test_ray_gives_the_rows_of_a_local_scan(local_ray, folder):
    local = scan(str(folder), "--jsonl", "-j", "1")
    on_ray = scan(str(folder), "--jsonl", "--engine", "ray")
    assert local.exit_code == on_ray.exit_code == 0, on_ray.output
    assert on_ray.stdout == local.stdout
    assert len(local.stdout.splitlines()) > 100 and '"error"' in local.stdout


def test_ray_gives_the_summary_database_and_verdict_of_a_local_scan(local_ray, folder, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    local = scan(str(folder), "--strict", "--db", str(tmp_path / "local.duckdb"), "-j", "1")
    on_ray = scan(str(folder), "--strict", "--db", str(tmp_path / "ray.duckdb"), "--engine", "ray")
    assert local.exit_code == on_ray.exit_code == 1  # the samples hold contract breaks
    assert on_ray.stderr == local.stderr
    assert on_ray.stdout.split("\n", 1)[1] == local.stdout.split("\n", 1)[1]
    query = "SELECT * FROM {} ORDER BY ALL"
    for table in ("exchanges", "calls", "anomalies", "contract"):
        a = duckdb.connect(str(tmp_path / "local.duckdb")).execute(query.format(table)).fetchall()
        b = duckdb.connect(str(tmp_path / "ray.duckdb")).execute(query.format(table)).fetchall()
        assert a == b and a, table
