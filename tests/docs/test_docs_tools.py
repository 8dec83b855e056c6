"""test_docs_tools.py - the documentation generators and the link checker refuse what they must: a config field the
parser reads but the page does not describe (and the reverse), a missing Python module or docstring, an operator in a
tactics list that ops.inc lacks, a broken link or anchor; and they extract what the sources say (config ranges,
operator limits with ';' inside the message, C declarations with their comments).
usage: python tests/docs/test_docs_tools.py   (from the repository root; needs no build)"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(ROOT, "tools", "docs")
failures = []


def run(args, env=None):
    p = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=ROOT, env=env)
    return p.returncode, p.stdout + p.stderr


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name)
    if not cond:
        failures.append(f"{name}: {detail[-800:]}")


def test_config(tmp):
    out = os.path.join(tmp, "config.md")
    rc, log = run([f"{GEN}/gen_config.py", "src/server/config.c", "src/server/config.h", out])
    text = open(out).read() if rc == 0 else ""
    check("gen_config builds the page", rc == 0, log)
    check("gen_config takes ranges from the parser", "| `dynamic_batching.priority_levels` | integer | [0, 16] |" in text
          and "[0, 3,600,000,000]" in text, text[:400])
    src = open(os.path.join(ROOT, "src/server/config.c")).read()
    extra = src.replace('if (opt_int(t, "engine_threads"', 'if (opt_int(t, "new_field", 0, 1, &v, path, "tailcut.")) '
                        'return 1;\n    if (opt_int(t, "engine_threads"', 1)
    path = os.path.join(tmp, "config_extra.c")
    open(path, "w").write(extra)
    rc, log = run([f"{GEN}/gen_config.py", path, "src/server/config.h", out])
    check("gen_config refuses an undescribed field", rc != 0 and "tailcut.new_field" in log, log)
    fewer = src.replace('cJSON_GetObjectItemCaseSensitive(t, "int8_reduce_range")', 'NULL', 1)
    open(path, "w").write(fewer)
    rc, log = run([f"{GEN}/gen_config.py", path, "src/server/config.h", out])
    check("gen_config refuses a described field no longer read", rc != 0 and "tailcut.int8_reduce_range" in log, log)


def test_ops(tmp):
    out = os.path.join(tmp, "ops.md")
    rc, log = run([f"{GEN}/gen_ops.py", ROOT, out])
    text = open(out).read() if rc == 0 else ""
    check("gen_ops builds the page", rc == 0, log)
    check("gen_ops lists every op of ops.inc", text.count("\n| `") == open(os.path.join(ROOT, "src/core/ops.inc"))
          .read().count("\nTC_OP("), log)
    check("gen_ops keeps a limit whole across ';'", "are not supported; only the inference output Y" in text, text[:300])
    fake = os.path.join(tmp, "repo")
    for d in ("src/core", "src/graph", "src/backends/ref", "src/backends/cpu"):
        os.makedirs(os.path.join(fake, d), exist_ok=True)
    shutil.copy(os.path.join(ROOT, "src/core/ops.inc"), os.path.join(fake, "src/core/ops.inc"))
    open(os.path.join(fake, "src/backends/cpu/tactics.inc"), "w").write("TC_TACTIC(NoSuchOp, x_avx2)\n")
    rc, log = run([f"{GEN}/gen_ops.py", fake, out])
    check("gen_ops refuses a tactic of an unknown op", rc != 0 and "NoSuchOp" in log, log)


def test_capi(tmp):
    out = os.path.join(tmp, "c.md")
    rc, log = run([f"{GEN}/gen_capi.py", "include/tailcut/tailcut.h", out])
    text = open(out).read() if rc == 0 else ""
    check("gen_capi builds the page", rc == 0, log)
    check("gen_capi documents tc_engine_build with its comment", "### `tc_engine_build`" in text, log)
    sys.path.insert(0, GEN)
    import gen_capi
    got = gen_capi.prose("TC_BUILD_* bits <b> `tc_x_y*`")
    check("gen_capi escapes Markdown in comments outside code", got == "TC\\_BUILD\\_\\* bits \\<b\\> `tc_x_y*`", got)


def test_python_api(tmp):
    out = os.path.join(tmp, "py.md")
    env = dict(os.environ, PYTHONPATH=os.path.join(tmp, "nomodule"))
    os.makedirs(os.path.join(tmp, "nomodule"), exist_ok=True)
    probe = subprocess.run([sys.executable, "-c", "import tailcut"], capture_output=True, env=env)
    if probe.returncode != 0:
        rc, log = run([f"{GEN}/gen_python_api.py", out], env=env)
        check("gen_python_api refuses a missing module clearly", rc != 0 and "cannot import" in log, log)
    pkg = os.path.join(tmp, "fake", "tailcut")
    os.makedirs(pkg)
    open(os.path.join(pkg, "__init__.py"), "w").write(
        '"""Fake."""\n__all__ = ["build", "Engine", "Error"]\n'
        'def build(model, shapes=None):\n    """Builds an engine of model."""\n'
        'class Engine:\n    """An engine."""\n    def save(self, path):\n        pass\n'
        'class Error(Exception):\n    pass\n')
    env = dict(os.environ, PYTHONPATH=os.path.join(tmp, "fake"))
    rc, log = run([f"{GEN}/gen_python_api.py", out], env=env)
    check("gen_python_api refuses a public name without a docstring", rc != 0 and "Engine.save" in log, log)
    check("gen_python_api does not take a class's docstring from its base", "Error" in log.split("docstring")[-1], log)
    open(os.path.join(pkg, "__init__.py"), "a").write("Engine.save.__doc__ = 'Writes the plan.'\n"
                                                       "Error.__doc__ = 'What the library reports.'\n")
    rc, log = run([f"{GEN}/gen_python_api.py", out], env=env)
    text = open(out).read() if rc == 0 else ""
    check("gen_python_api writes signatures and docstrings", "## `tailcut.build`" in text and "build(model, shapes=None)" in text
          and "Writes the plan." in text, log + text[:300])


def test_links(tmp):
    site = os.path.join(tmp, "site")
    os.makedirs(os.path.join(site, "guides"))
    open(os.path.join(site, "index.html"), "w").write(
        '<a href="guides/a.html#sec">a</a> <a href="https://example.com/x">x</a> <h2 id="top">t</h2>')
    open(os.path.join(site, "guides", "a.html"), "w").write('<h2 id="sec">s</h2><a href="../index.html#top">up</a>')
    readme = os.path.join(tmp, "README.md")
    os.makedirs(os.path.join(tmp, "docs"))
    open(os.path.join(tmp, "docs", "p.md"), "w").write("# Page\n\n## Some section\n")
    open(readme, "w").write("[p](docs/p.md#some-section) [web](https://example.com)\n")
    rc, log = run([f"{GEN}/check_links.py", site, readme])
    check("check_links accepts good links and anchors", rc == 0, log)
    open(os.path.join(site, "guides", "a.html"), "a").write('<a href="../index.html#nope">x</a><a href="b.html">y</a>')
    open(readme, "a").write("[q](docs/q.md) [r](docs/p.md#other)\n")
    rc, log = run([f"{GEN}/check_links.py", site, readme])
    check("check_links reports a missing anchor, a missing page, and README's", rc != 0 and "#nope" in log
          and "b.html" in log and "docs/q.md" in log and "#other" in log, log)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_config, test_ops, test_capi, test_python_api, test_links):
            d = os.path.join(tmp, t.__name__)
            os.makedirs(d)
            t(d)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(f"test_docs_tools.py: {len(failures)} failed")
    print("test_docs_tools.py: all passed")


if __name__ == "__main__":
    main()
