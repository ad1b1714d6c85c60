"""The one writer (``synthguard.core.io``): files atomically, pipes, terminals and ``-`` as streams,
links followed only to what may be written, everything else refused with one line."""

from __future__ import annotations

import doctest
import os
import socket
import stat
import threading

import pytest

import synthguard.core.io as io_mod
from synthguard.core.io import (
    atomic_write_text,
    check_distinct_outputs,
    check_writable,
    open_output,
    output_target,
    write_csv,
)
from synthguard.errors import ConfigError


def test_docstring_examples_run():
    assert doctest.testmod(io_mod, optionflags=doctest.ELLIPSIS).failed == 0


def test_a_regular_file_is_replaced_through_a_temporary_file_and_keeps_its_mode(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    out.chmod(0o640)
    inode = out.stat().st_ino
    atomic_write_text(out, "new")
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert out.stat().st_ino != inode  # a new file renamed over the old one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    with pytest.raises(RuntimeError), open_output(out) as fh:
        fh.write("half")
        raise RuntimeError("disk gone")
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_dash_is_standard_output(capsys):
    atomic_write_text("-", "to stdout\n")
    assert capsys.readouterr().out == "to stdout\n"


def test_a_named_pipe_with_a_reader_is_written_as_a_stream_and_stays_a_pipe(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    assert output_target(fifo).kind == "stream"
    check_writable(fifo, "--json")  # never opens it (that would end the reader)
    atomic_write_text(fifo, '{"a": 1}\n')
    reader.join(timeout=10)
    assert not reader.is_alive() and got == ['{"a": 1}\n']
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_link_to_one_of_our_descriptors_writes_through_it_and_stays_a_link(tmp_path):
    r, w = os.pipe()
    link = tmp_path / "out.json"
    link.symlink_to(f"/proc/self/fd/{w}")
    try:
        target = output_target(link, "--json")
        assert (target.kind, target.fd) == ("stream", w)
        atomic_write_text(link, "through the pipe\n")
    finally:
        os.close(w)
    with os.fdopen(r) as fh:
        assert fh.read() == "through the pipe\n"
    assert link.is_symlink() and os.readlink(link) == f"/proc/self/fd/{w}"


def test_dev_stdout_is_our_descriptor_1():
    target = output_target("/dev/stdout", "--json")
    assert (target.kind, target.fd) == ("stream", 1)


def test_a_link_to_a_descriptor_on_a_file_appends_after_what_was_written(tmp_path):
    f = tmp_path / "console.txt"
    with open(f, "w") as fh:
        fh.write("console first\n")
        fh.flush()
        link = tmp_path / "json"
        link.symlink_to(f"/dev/fd/{fh.fileno()}")
        atomic_write_text(link, "then the report\n")
        fh.write("then the message\n")
    assert f.read_text() == "console first\nthen the report\nthen the message\n"
    assert link.is_symlink()


def test_a_terminal_or_dev_null_is_a_stream():
    assert output_target("/dev/null").kind == "stream"
    check_writable("/dev/null", "--json")
    atomic_write_text("/dev/null", "nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_link_to_a_regular_file_is_followed_and_kept(tmp_path):
    real = tmp_path / "reports" / "latest.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    assert output_target(link).path == real.resolve()
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert not list(tmp_path.glob(".latest.json.*")) and not list(real.parent.glob(".latest.json.*"))


@pytest.mark.parametrize("case", ["dangling", "folder", "loop"])
def test_a_link_to_nothing_or_a_folder_is_refused_with_one_line(tmp_path, case):
    link = tmp_path / "out.json"
    if case == "dangling":
        link.symlink_to(tmp_path / "nowhere.json")
    elif case == "folder":
        link.symlink_to(tmp_path)
    else:
        link.symlink_to(tmp_path / "other")
        (tmp_path / "other").symlink_to(link)
    with pytest.raises(ConfigError) as err:
        check_writable(link, "--json")
    msg = str(err.value)
    assert "\n" not in msg and "--json" in msg and "symbolic link" in msg and "give the path of a file" in msg
    with pytest.raises(ConfigError):
        atomic_write_text(link, "x")
    assert link.is_symlink()  # still the user's link


def test_a_folder_or_a_socket_is_refused(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="is a folder"):
        check_writable(tmp_path, "--json")
    monkeypatch.chdir(tmp_path)  # a relative socket name: no limit on the temporary path's length
    with socket.socket(socket.AF_UNIX) as s:
        s.bind("sock")
        with pytest.raises(ConfigError, match="is a socket"):
            check_writable(tmp_path / "sock", "--json")
    assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)


def test_two_outputs_on_standard_output_are_refused():
    with pytest.raises(ConfigError, match="--html and --json both write to standard output"):
        check_distinct_outputs({"--json": "-", "--html": "-"}, {})
    check_distinct_outputs({"--json": "-", "--html": "r.html"}, {"--original": "-"})


def test_a_link_to_an_input_is_refused_before_any_write(tmp_path):
    data = tmp_path / "original.csv"
    data.write_text("a\n1\n")
    link = tmp_path / "r.json"
    link.symlink_to(data)
    with pytest.raises(ConfigError, match="is the --original input"):
        check_distinct_outputs({"--json": link}, {"--original": data})


def test_write_csv_writes_a_safe_csv_and_quotes_every_line_break(tmp_path):
    import pandas as pd

    out = tmp_path / "t.csv"
    write_csv(pd.DataFrame({"=a": ["-1", "@x", "x\r=cmd|' /C calc'!A0"], "b": [1.5, -2.0, 0.0]}), out)
    assert out.read_bytes() == (b"'=a,b\r\n-1,1.5\r\n'@x,-2.0\r\n\"x\r=cmd|' /C calc'!A0\",0.0\r\n")
    assert pd.read_csv(out).iloc[2, 0] == "x\r=cmd|' /C calc'!A0"  # one cell, not a new row


def test_binary_outputs_go_through_the_same_writer(tmp_path):
    out = tmp_path / "model.pkl"
    with open_output(out, binary=True) as fh:
        fh.write(b"\x00\x01")
    assert out.read_bytes() == b"\x00\x01"
