"""The first lines of every judged program's own fresh interpreter (a standalone script: it imports nothing from
creval; the host passes its source as ``python -I -S -c <this file> <code fd> <limits>``: plain integers, so
that the boot imports nothing a program would not).

There is no runner inside the jail: the host starts one jail and one fresh interpreter per program run, and
reads the run's exit status, time and output itself from outside. This boot code only prepares the program's
own process before the program's first line runs:
1. reads the program's code from the descriptor the host named (a file of its own), then closes every
   descriptor but 0, 1 and 2 (the jail's status pipe included);
2. sets the resource limits, hard limits included (address space, file size, open files, processes, CPU (the
   hard limit kills: as the jail's pid 1 the program would ignore SIGXCPU), no core files): without
   ``CAP_SYS_RESOURCE`` in the host's namespace the program cannot raise them again;
3. does what ``site`` does for a program, without its start-up cost (``-S``: no ``.pth`` file is run): the
   site-packages folders that exist on ``sys.path``, ``exit``/``quit``/``help``/``copyright`` as builtins;
4. compiles the code (exit 76 with ``creval-boot: not parsable:`` on stderr when it is not Python) and runs it
   as ``__main__`` (exit 75 on ``MemoryError``, the exit status of ``SystemExit``, 1 on any other exception).

Whatever the program then does, it can only change its own exit status and its own output: nothing it writes
reaches another program or the host's record of another run.
"""
import os
import resource
import sys


def _site():
    import site
    for d in site.getsitepackages():
        if os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
    site.setquit()
    site.setcopyright()
    site.sethelper()


def _boot():
    fd, memory_mb, output_bytes, open_files, cpu, nproc = (int(x) for x in sys.argv[1:7])
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            break
        chunks.append(b)
    os.closerange(3, 1 << 16)
    mb = 1 << 20
    pairs = [(resource.RLIMIT_AS, memory_mb * mb), (resource.RLIMIT_FSIZE, output_bytes),
             (resource.RLIMIT_NOFILE, open_files), (resource.RLIMIT_CORE, 0), (resource.RLIMIT_CPU, (cpu, cpu))]
    if hasattr(resource, "RLIMIT_NPROC") and nproc:
        pairs.append((resource.RLIMIT_NPROC, nproc))
    for what, value in pairs:
        soft, hard = value if isinstance(value, tuple) else (value, value)
        try:
            resource.setrlimit(what, (soft, hard))
        except (ValueError, OSError):
            pass
    _site()
    source = b"".join(chunks).decode("utf-8", "surrogatepass")
    try:
        code_obj = compile(source, "solution.py", "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        sys.stderr.write(f"creval-boot: not parsable: {type(e).__name__}: {e}\n")
        sys.stderr.flush()
        os._exit(76)
    del chunks, source
    sys.argv = ["solution.py"]
    os.environ.clear()          # what bwrap and the interpreter set (PWD, LC_CTYPE): the program sees none
    return code_obj


def _run(code_obj):
    code = 0
    try:
        import builtins
        exec(code_obj, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as e:
        c = e.code
        code = c if isinstance(c, int) else (0 if c is None else 1)
        if not isinstance(c, int) and c is not None:
            try:
                sys.stderr.write(str(c) + "\n")
            except BaseException:
                pass
    except MemoryError:
        code = 75
        try:
            sys.stderr.write("MemoryError\n")
        except BaseException:
            pass
    except BaseException:
        code = 1
        try:
            import traceback
            traceback.print_exc()
        except BaseException:
            pass
    try:
        sys.stdout.flush()
    except BaseException:
        if code == 0:
            code = 1
    try:
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code & 0xFF)


_run(_boot())
