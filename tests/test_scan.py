"""`streamscope scan`: a folder of recordings at once, its rows agreeing with `inspect
--json`, the summary, --strict, DuckDB and Parquet, incremental scans, and every path
that cannot be read costing one line, never the scan."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from benchmarks.gen_scan import make_folder, samples, varied
from streamscope.cli import main, split_reference
from streamscope.scan import analyze_bytes, analyze_file
from streamscope.scan.store import SCHEMA

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "recordings"
HAR = ROOT / "tests" / "fixtures" / "har" / "mitmproxy-three.har"
needs_duckdb = pytest.mark.skipif(
    importlib.util.find_spec("duckdb") is None, reason="duckdb is not installed (its extra)"
)


def scan(*args: str):
    return CliRunner().invoke(main, ["scan", *args])


def copy(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(RECORDINGS / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """Every bundled sample, a HAR capture, and generated variations of them (other hosts
    and models), in nested folders."""
    folder = tmp_path_factory.mktemp("mixed")
    for path in samples():
        shutil.copy(path, folder / os.path.basename(path))
    shutil.copy(HAR, folder / HAR.name)
    make_folder(str(folder / "generated"), 70)
    return folder


def jsonl_rows(output: str) -> list[dict]:
    return [orjson.loads(line) for line in output.splitlines() if line]


def inspect_json(path: str) -> dict:
    done = CliRunner().invoke(main, ["inspect", "--json", path])
    assert done.exit_code == 0, done.output
    return orjson.loads(done.output)


@pytest.mark.slow
def test_rows_agree_with_inspect_json_of_each_file(mixed):
    done = scan(str(mixed), "--jsonl", "-j", "2")
    assert done.exit_code == 0, done.output
    rows = jsonl_rows(done.stdout)
    files = {r["file"] for r in rows}
    assert len(files) == len(samples()) + 1 + 70
    assert {r["dialect"] for r in rows} >= {
        "chat-completions",
        "anthropic-messages",
        "openai-responses",
        "gemini",
    }
    assert {r["format"] for r in rows} == {"recording", "sse", "chunks", "har"}
    for file in sorted(files):
        doc = inspect_json(file)
        # a row per stream: a WebSocket session's responses each have their own (turn)
        mine = {(r["exchange"], r["turn"]): r for r in rows if r["file"] == file and r["stream"]}
        assert sorted(mine) == [(s["exchange"], s.get("turn")) for s in doc["streams"]], file
        contract: dict[tuple[int, int | None], list[str]] = {}
        for c in doc["contract"]:
            contract.setdefault((c["exchange"], c.get("turn")), []).append(c["kind"])
        for s in doc["streams"]:
            row = mine[(s["exchange"], s.get("turn"))]
            assert row["frames"] == s["frames"], file
            assert row["ended"] == s["ended"], file
            assert row["dialect"] == s["dialect"], file
            assert row["framing"] == s["framing"], file
            assert row["calls"] == len(s["tool_calls"]), file
            assert row["anomaly_kinds"] == [a["kind"] for a in s["anomalies"]], file
        every = {(r["exchange"], r["turn"]): r["contract_kinds"] for r in rows if r["file"] == file}
        assert {k: v for k, v in every.items() if v} == contract, file


def test_a_pool_gives_the_rows_of_one_process(mixed):
    one = scan(str(mixed), "--jsonl", "-j", "1")
    two = scan(str(mixed), "--jsonl", "-j", "2")
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout and one.stdout


def test_the_summary_counts_per_host_and_model_and_points_at_exchanges(tmp_path):
    folder = copy(
        tmp_path / "f", "alibaba-empty-id.jsonl", "openai.jsonl", "buggy-agent-uuid.jsonl"
    )
    done = scan(str(folder), "-j", "1")
    assert done.exit_code == 0, done.output
    out = done.stdout
    assert "scanned 3 files" in out and "6 exchanges, 6 streams" in out
    assert "dashscope.aliyuncs.com  qwen3.8-max-preview: 2 exchanges, 2 streams" in out
    line = next(x for x in out.splitlines() if "id-empty-overwrite" in x)
    assert "warning" in line and "1 stream" in line and "50.0%" in line
    ref = f"{folder / 'alibaba-empty-id.jsonl'}#1"
    assert ref in line
    # the reference opens with replay: the file and its exchange
    assert split_reference(ref, None) == (str(folder / "alibaba-empty-id.jsonl"), 1)
    breaks = next(x for x in out.splitlines() if "tool-call-id-substituted" in x)
    assert "1 break (contract)" in breaks and "buggy-agent-uuid.jsonl#2" in breaks


def test_the_shares_stand_in_one_column_whatever_the_counts(tmp_path):
    # one kind in 1 stream, another in 2: "1 stream" is a letter shorter than "2 streams"
    folder = copy(
        tmp_path / "f",
        "anthropic-max-tokens.jsonl",
        "anthropic-spliced-message.jsonl",
        "anthropic-start-input.jsonl",
    )
    done = scan(str(folder))
    assert done.exit_code == 0, done.output
    shares = [x for x in done.stdout.splitlines() if x.startswith("  ") and "%" in x]
    assert any(" 1 stream " in x for x in shares) and any(" 2 streams " in x for x in shares)
    assert len({x.index("%") for x in shares}) == 1, shares


def test_a_line_says_how_many_places_it_does_not_link(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    for n in range(5):  # the same quirk and contract break in five files
        shutil.copy(RECORDINGS / "alibaba-empty-id.jsonl", folder / f"a{n}.jsonl")
        shutil.copy(RECORDINGS / "buggy-agent-uuid.jsonl", folder / f"b{n}.jsonl")
    # three breaks in one exchange are one place: its one link, nothing more
    shutil.copy(RECORDINGS / "responses-interleaved.jsonl", folder / "r.jsonl")
    done = scan(str(folder), "-j", "1")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    quirk = next(x for x in lines if "id-empty-overwrite" in x)
    assert "5 streams" in quirk and quirk.count(".jsonl#") == 3 and quirk.endswith(" +2 more")
    substituted = next(x for x in lines if "tool-call-id-substituted" in x)
    assert "5 breaks" in substituted and substituted.endswith(" +2 more")
    invalid = next(x for x in lines if "tool-call-arguments-invalid" in x)
    assert "3 breaks" in invalid and invalid.endswith("r.jsonl#2")


def test_strict_fails_on_one_contract_break_and_names_it(tmp_path):
    clean = copy(tmp_path / "clean", "openai.jsonl", "vllm.jsonl")
    assert scan("--strict", str(clean)).exit_code == 0
    broken = copy(tmp_path / "broken", "openai.jsonl", "buggy-agent-uuid.jsonl")
    done = scan("--strict", str(broken))
    assert done.exit_code == 1
    assert f"{broken / 'buggy-agent-uuid.jsonl'}#2: tool-call-id-substituted" in done.stderr
    assert "--strict: 1 finding:" in done.stderr


def test_strict_fails_on_an_error_anomaly(tmp_path):
    folder = copy(tmp_path / "f", "dashscope-truncated-args.jsonl")
    done = scan("--strict", str(folder))
    assert done.exit_code == 1
    # the link leads to the frame the anomaly is first seen at
    assert "dashscope-truncated-args.jsonl#1@3: args-invalid-json" in done.stderr


def test_what_cannot_be_read_is_one_line_each_and_the_scan_goes_on(tmp_path):
    folder = copy(tmp_path / "f", "openai.jsonl")
    (folder / "notes.txt").write_text("not a recording\n")
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    (folder / "loop").symlink_to(folder)  # a link back up the tree
    empty = tmp_path / "empty"
    empty.mkdir()
    assert scan(str(folder), str(empty)).exit_code == 0  # what folders hold is counted
    done = scan(str(folder), str(empty), str(tmp_path / "missing"), str(tmp_path / "*.none"))
    assert done.exit_code == 2, done.output  # PATHs that name nothing: bad input, after it all
    out = done.stdout
    assert "scanned 2 files" in out and "1 read, 1 unreadable" in out
    assert "gpt-4o-mini: 2 exchanges, 2 streams" in out  # openai.jsonl was read
    lines = out.splitlines()

    def one(*words: str) -> None:
        assert len([x for x in lines if all(w in x for w in words)]) == 1, words

    one("unreadable:", "notes.txt")
    one("gone.jsonl", "a symbolic link to nothing")
    one(f"{folder / 'loop'}:", "symbolic link loop")
    one(f"{empty}:", "no files")
    one("missing:", "no such file or folder")
    one("*.none:", "matches no file")
    assert "Traceback" not in done.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_said_to_be_one_and_never_opened(tmp_path):
    folder = copy(tmp_path / "f", "openai.jsonl")
    os.mkfifo(folder / "live.jsonl")  # opened for reading, it would wait for a writer
    (folder / "to-pipe.jsonl").symlink_to(folder / "live.jsonl")
    done = scan(str(folder))
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    for name in ("live.jsonl", "to-pipe.jsonl"):
        said = [x for x in lines if name in x]
        assert len(said) == 1 and "a named pipe (FIFO)" in said[0], said
    assert "broken link" not in done.stdout and "scanned 1 file" in done.stdout


def test_a_file_that_grows_during_the_scan_is_one_line(tmp_path, monkeypatch):
    folder = copy(tmp_path / "f", "openai.jsonl", "alibaba-empty-id.jsonl")
    growing = folder / "openai.jsonl"
    import streamscope.scan.run as run

    real = run.analyze_file

    def analyze_while_it_grows(path, name=None):
        if path == str(growing):  # the recorder appends while we read
            with open(growing, "ab") as f:
                f.write(b"\n")
        return real(path, name)

    monkeypatch.setattr(run, "analyze_file", analyze_while_it_grows)
    done = scan(str(folder), "-j", "1")
    assert done.exit_code == 0, done.output
    assert "scanned 2 files" in done.stdout
    changed = [x for x in done.stdout.splitlines() if "changed while it was read" in x]
    assert changed == [f"{growing}: changed while it was read; scan it again"]


def test_file_derived_strings_reach_the_terminal_escaped(tmp_path):
    data = (RECORDINGS / "alibaba-empty-id.jsonl").read_bytes()
    (tmp_path / "evil.jsonl").write_bytes(varied(data, None, "model\x1b[2J"))
    done = scan(str(tmp_path))
    assert done.exit_code == 0
    assert "\x1b" not in done.stdout and "model\\x1b[2J" in done.stdout


def test_the_progress_bar_is_only_for_a_terminal(tmp_path):
    done = scan(str(copy(tmp_path / "f", "openai.jsonl")))
    assert "\r" not in done.stderr and "files" not in done.stderr


def test_the_per_file_function_takes_bytes_too(tmp_path):
    path = RECORDINGS / "alibaba-empty-id.jsonl"
    by_path = analyze_file(str(path))
    by_bytes = analyze_bytes(path.read_bytes(), str(path))
    assert by_bytes == by_path and by_path.exchanges
    bad = analyze_bytes(b"\x00\x01 not an input", "s3://bucket/x.jsonl")
    assert bad.error is not None and bad.error.startswith("s3://bucket/x.jsonl")
    assert "streamscope-scan-" not in bad.error


def test_replay_reference_checks_the_path_first(tmp_path):
    hashed = tmp_path / "run#2"  # a real name with '#'
    hashed.write_text("x")
    assert split_reference(str(hashed), None) == (str(hashed), None)
    plain = tmp_path / "a.jsonl"
    plain.write_text("x")
    assert split_reference(f"{plain}#3", None) == (str(plain), 3)
    assert split_reference(f"{tmp_path / 'none'}#3", None) == (f"{tmp_path / 'none'}#3", None)
    done = CliRunner().invoke(main, ["replay", f"{plain}#3", "--exchange", "2"])
    assert done.exit_code == 2 and "names exchange 3" in done.output


# -- DuckDB and Parquet


def documented_query(title: str) -> str:
    """A query from docs/commands/scan.md: the sql block after the heading `title`."""
    page = (ROOT / "docs" / "commands" / "scan.md").read_text()
    after = page.split(f"### {title}\n", 1)[1]
    return re.search(r"```sql\n(.*?)```", after, re.S).group(1)


@pytest.mark.slow
@needs_duckdb
def test_the_documented_query_gives_the_share_per_model(tmp_path):
    import duckdb

    folder = copy(tmp_path / "f", "alibaba-empty-id.jsonl", "openai.jsonl")
    data = (RECORDINGS / "alibaba-empty-id.jsonl").read_bytes()
    (folder / "clean-qwen.jsonl").write_bytes(
        varied((RECORDINGS / "openai.jsonl").read_bytes(), None, "qwen3.8-max-preview")
    )
    assert data
    db = tmp_path / "scan.duckdb"
    assert scan(str(folder), "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db))
    got = con.execute(documented_query("Share of streams with id-empty-overwrite, per model"))
    shares = {model: share for model, *_, share in got.fetchall()}
    # qwen: 4 streams, one of which has the empty id; gpt-4o-mini: none
    assert shares == {"qwen3.8-max-preview": 0.25, "gpt-4o-mini": 0.0}


@pytest.mark.slow
@needs_duckdb
def test_the_tables_hold_the_rows_and_parquet_the_same(tmp_path, mixed):
    import duckdb

    db, pq = tmp_path / "scan.duckdb", tmp_path / "pq"
    done = scan(str(mixed), "--db", str(db), "--parquet", str(pq), "--jsonl")
    assert done.exit_code == 0, done.output
    rows = jsonl_rows(done.stdout)
    con = duckdb.connect(str(db))
    assert con.execute("SELECT count(*) FROM exchanges").fetchone()[0] == len(rows)
    for table in ("files", "exchanges", "calls", "anomalies", "contract"):
        n = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        assert n > 0, table
        parquet = str(pq / f"{table}.parquet")
        assert con.execute("SELECT count(*) FROM read_parquet(?)", [parquet]).fetchone()[0] == n
    kinds = {k for r in rows for k in r["anomaly_kinds"]}
    stored = {k for (k,) in con.execute("SELECT DISTINCT kind FROM anomalies").fetchall()}
    assert stored == kinds


@needs_duckdb
def test_a_second_scan_reads_only_the_files_that_changed(tmp_path, monkeypatch):
    import duckdb

    import streamscope.scan.run as run
    import streamscope.scan.store as store

    folder = tmp_path / "f"
    paths = make_folder(str(folder), 40)
    db = str(tmp_path / "scan.duckdb")
    first = scan(str(folder), "--db", db, "-j", "1")
    assert first.exit_code == 0

    analysed: list[str] = []
    hashed: list[str] = []
    real_analyze, real_stamp = run.analyze_file, store.stamp
    monkeypatch.setattr(
        run, "analyze_file", lambda p, n=None: analysed.append(p) or real_analyze(p, n)
    )
    monkeypatch.setattr(store, "stamp", lambda p: hashed.append(p) or real_stamp(p))
    monkeypatch.setattr(run, "stamp", store.stamp)

    touched = paths[5:15]  # a new mtime, the same bytes: read to hash, not analysed
    for p in touched:
        os.utime(p, ns=(1, 1))
    second = scan(str(folder), "--db", db, "-j", "1")
    assert second.exit_code == 0
    assert sorted(hashed) == sorted(touched) and analysed == []
    assert "(40 unchanged since the last scan)" in second.stdout
    assert _body(second.stdout) == _body(first.stdout)

    hashed.clear()
    changed = paths[20:30]  # new bytes: read and analysed, and only they
    for p in changed:
        data = Path(p).read_bytes()
        Path(p).write_bytes(
            varied(data, "changed.example.com", None) if data[:1] == b"{" else data + b" "
        )
    third = scan(str(folder), "--db", db, "-j", "1")
    assert third.exit_code == 0
    assert sorted(analysed) == sorted(changed)
    assert "0 unreadable" in third.stdout
    con = duckdb.connect(db)
    got = con.execute(
        "SELECT DISTINCT file FROM exchanges WHERE host = 'changed.example.com'"
    ).fetchall()
    recordings = {p for p in changed if Path(p).read_bytes().startswith(b'{"type":"header"')}
    assert {f for (f,) in got} == recordings and recordings
    assert con.execute("SELECT count(DISTINCT file) FROM files").fetchone()[0] == 40


def _body(summary: str) -> str:
    """A summary without its first line (which says the time taken and what was reused)."""
    return summary.split("\n", 1)[1]


def test_without_duckdb_db_is_one_line_naming_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)
    folder = copy(tmp_path / "f", "openai.jsonl")
    done = scan(str(folder), "--db", str(tmp_path / "x.duckdb"))
    assert done.exit_code == 2
    assert done.output.strip() == (
        "streamscope: --db and --parquet need DuckDB: pip install 'streamscope[duckdb]'"
    )
    assert scan(str(folder)).exit_code == 0  # a plain scan does not need it


@needs_duckdb
def test_a_bad_database_is_one_line(tmp_path):
    bad = tmp_path / "bad.duckdb"
    bad.write_text("not a database")
    done = scan(str(copy(tmp_path / "f", "openai.jsonl")), "--db", str(bad))
    assert done.exit_code == 2
    assert done.output.count("\n") == 1 and "cannot open it as a DuckDB database" in done.output


def test_the_progress_bar_counts_files_and_clears_its_line(capsys):
    from streamscope.scan.run import Progress

    bar = Progress(2, enabled=True)
    bar.step()
    bar.step()
    bar.close()
    err = capsys.readouterr().err
    assert "1/2 files" in err and err.rstrip("\x1b[K").endswith("2/2 files\r")


def test_a_file_named_on_the_command_line_that_is_no_input_is_bad_input(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01binary\xff")
    done = scan(str(junk), str(RECORDINGS / "openai.jsonl"))
    assert done.exit_code == 2  # as `inspect junk.bin` says, after the scan of the rest
    assert "gpt-4o-mini: 2 exchanges, 2 streams" in done.stdout
    assert f"unreadable: {junk}: line 1 (byte 0): binary data" in done.stdout


def test_inspect_and_export_take_the_reference_scan_prints(tmp_path):
    """`scan` links FILE#N: inspect and export read it as --exchange N; a file whose own
    name holds `#` is still that file."""
    runner = CliRunner()
    openai = str(RECORDINGS / "openai.jsonl")
    whole = runner.invoke(main, ["inspect", "--json", openai, "--exchange", "2"])
    done = runner.invoke(main, ["inspect", "--json", f"{openai}#2"])
    assert done.exit_code == 0, done.output
    assert orjson.loads(done.output)["streams"] == orjson.loads(whole.output)["streams"]
    done = runner.invoke(main, ["inspect", f"{openai}#2", "--exchange", "1"])
    assert done.exit_code == 2 and "names exchange 2, and --exchange says 1" in done.output
    exported = runner.invoke(main, ["export", f"{openai}#2"])
    assert exported.exit_code == 0, exported.output
    assert (
        exported.stdout_bytes
        == runner.invoke(main, ["export", openai, "--exchange", "2"]).stdout_bytes
    )
    shutil.copy(openai, tmp_path / "x.jsonl")
    shutil.copy(RECORDINGS / "alibaba-empty-id.jsonl", tmp_path / "x.jsonl#2")
    done = runner.invoke(main, ["inspect", "--json", str(tmp_path / "x.jsonl#2")])
    alibaba = runner.invoke(main, ["inspect", "--json", str(RECORDINGS / "alibaba-empty-id.jsonl")])
    # the same streams; each finding's link names the file it was read from
    hashed, plain = (orjson.loads(r.output)["streams"] for r in (done, alibaba))
    assert [a["link"] for s in hashed for a in s["anomalies"]] == [
        f"{tmp_path / 'x.jsonl#2'}#1@2"
    ] * 2
    for s in hashed + plain:
        for a in s["anomalies"]:
            del a["link"]
    assert hashed == plain


def test_a_glob_walks_as_a_folder_does_a_link_loop_costing_one_line(tmp_path, monkeypatch):
    tree = copy(tmp_path / "tree", "openai.jsonl")
    copy(tree / "sub" / "deep", "alibaba-empty-id.jsonl")
    (tree / "sub" / "loop").symlink_to(tree)  # glob.glob(recursive=True) went round these
    (tree / "sub" / "up").symlink_to("..")
    monkeypatch.chdir(tmp_path)
    done = scan("-j", "1", "--jsonl", "tree/**/*.jsonl")
    assert done.exit_code == 0, done.output
    assert sorted({r["file"] for r in jsonl_rows(done.stdout)}) == [
        "tree/openai.jsonl",
        "tree/sub/deep/alibaba-empty-id.jsonl",
    ]
    assert done.stderr.count("symbolic link loop") == 2
    shallow = scan("-j", "1", "--jsonl", "tree/*.jsonl")  # no deeper than it names
    assert {r["file"] for r in jsonl_rows(shallow.stdout)} == {"tree/openai.jsonl"}
    assert "loop" not in shallow.stderr
    rows = jsonl_rows(scan("-j", "1", "--jsonl", "tree/s?b", "t*/[o]*.jsonl").stdout)
    assert sorted({r["file"] for r in rows}) == [
        "tree/openai.jsonl",
        "tree/sub/deep/alibaba-empty-id.jsonl",
    ]


@needs_duckdb
def test_outputs_are_private_and_any_file_name_reaches_every_output(tmp_path):
    import duckdb

    folder = tmp_path / "f"
    folder.mkdir()
    data = (RECORDINGS / "alibaba-empty-id.jsonl").read_bytes()
    (Path(os.fsdecode(bytes(folder) + b"/x\xff.jsonl"))).write_bytes(data)
    (folder / "new\nline\x1b[2J.jsonl").write_bytes(data)
    db, pq = tmp_path / "out" / "scan.duckdb", tmp_path / "pq"
    done = scan("-j", "1", "--db", str(db), "--parquet", str(pq), str(folder))
    assert done.exit_code == 0, done.output
    assert "\x1b" not in done.output and "x\\xff.jsonl#1@2" in done.stdout
    for path in [db, *pq.iterdir()]:
        assert path.stat().st_mode & 0o777 == 0o600, path
    assert sorted(p.name for p in pq.iterdir()) == sorted(f"{t}.parquet" for t in SCHEMA)
    names = {f"{folder}/x\\xff.jsonl", f"{folder}/new\nline\x1b[2J.jsonl"}
    con = duckdb.connect(str(db))
    assert {f for (f,) in con.execute("SELECT file FROM files").fetchall()} == names
    con.close()
    parquet = duckdb.sql(f"SELECT DISTINCT file FROM '{pq}/exchanges.parquet'").fetchall()
    assert {f for (f,) in parquet} == names
    rows = jsonl_rows(scan("-j", "1", "--jsonl", str(folder)).stdout)
    assert {r["file"] for r in rows} == names
    again = scan("-j", "1", "--db", str(db), str(folder))  # the names match the stored ones
    assert "(2 unchanged since the last scan)" in again.stdout


@needs_duckdb
def test_an_output_error_names_the_output(tmp_path, monkeypatch):
    from streamscope.scan import store

    def full(self):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store.Store, "_flush", full)
    pq = tmp_path / "pq"
    done = scan("-j", "1", "--parquet", str(pq), str(copy(tmp_path / "f", "openai.jsonl")))
    assert done.exit_code == 2
    assert (
        done.output.startswith(f"streamscope: {pq}: cannot write") and ":memory:" not in done.output
    )


@pytest.mark.slow
@needs_duckdb
def test_ctrl_c_stops_every_worker_quietly_and_the_store_serves_the_next_scan(tmp_path):
    import signal
    import subprocess
    import time

    folder = tmp_path / "many"
    make_folder(str(folder), 600)
    db = tmp_path / "scan.duckdb"
    args = [sys.executable, "-m", "streamscope", "scan", "-j", "2", "--db", str(db), str(folder)]
    p = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    for _ in range(100):  # the pool started, the store open: mid-scan
        if db.exists():
            break
        time.sleep(0.05)
    time.sleep(0.3)  # as a terminal's Ctrl-C: SIGINT to the scan and its workers
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Traceback" not in err.decode() and err.decode().count("\n") == 1
    again = subprocess.run(args, capture_output=True, timeout=120)
    assert again.returncode == 0 and b"scanned " in again.stdout, again.stderr
