"""cheader.py - splits a C header into documented items (the comment above a declaration and the declaration),
grouped by the header's `/* ---- Section ---- */` markers. Used by gen_capi.py and gen_plan_format.py."""
import re

SECTION = re.compile(r"^/\*\s*-{3,}\s*(.*?)\s*-*\s*\*/\s*$")
SKIP_PP = re.compile(r"^\s*#\s*(include|if|ifdef|ifndef|else|elif|endif|undef|pragma)\b")


def _clean_comment(lines):
    """The text of a /* ... */ comment without its markers and leading ' * '."""
    text = "\n".join(lines)
    text = re.sub(r"^\s*/\*+", "", text)
    text = re.sub(r"\*+/\s*$", "", text)
    out = []
    for ln in text.split("\n"):
        ln = re.sub(r"^\s*\* ?", "", ln) if ln.lstrip().startswith("*") else ln.strip()
        out.append(ln.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


def _name_of(decl):
    """The name an item declares: a function, a typedef, a macro; None for anonymous enums."""
    m = re.match(r"#\s*define\s+(\w+)", decl)
    if m:
        return m.group(1)
    flat = " ".join(decl.split())
    m = re.search(r"}\s*(\w+)\s*;\s*$", flat)
    if m:
        return m.group(1)
    m = re.match(r"typedef\s+(?:struct|enum|union)\s+\w+\s+(\w+)\s*;", flat)
    if m:
        return m.group(1)
    m = re.match(r"typedef\s+[^;(]*\(\s*\*\s*(\w+)\s*\)", flat)
    if m:
        return m.group(1)
    m = re.search(r"(\w+)\s*\(", flat)
    if m and not flat.startswith("enum") and not flat.startswith("_Static_assert"):
        return m.group(1)
    return None


def parse(text, skip_defines=()):
    """Returns (file_comment, sections): sections is a list of (title, items), items of (name, comment, code).
    The first section has title None (before any marker). Preprocessor lines other than #define are skipped,
    as are the #defines named in skip_defines and `extern "C"` braces."""
    lines = text.split("\n")
    sections = [(None, [])]
    file_comment = None
    pending = []
    i, n = 0, len(lines)
    while i < n:
        ln = lines[i]
        s = ln.strip()
        if not s or s in ('extern "C" {', "}") or SKIP_PP.match(s):
            if s.startswith("#") and s.endswith("\\"):
                while i < n and lines[i].rstrip().endswith("\\"):
                    i += 1
            i += 1
            continue
        if s.startswith("/*"):
            m = SECTION.match(s)
            if m:
                sections.append((m.group(1), []))
                pending = []
                i += 1
                continue
            block = [ln]
            while "*/" not in lines[i]:
                i += 1
                block.append(lines[i])
            i += 1
            c = _clean_comment(block)
            if file_comment is None and not any(items for _, items in sections):
                file_comment = c
            else:
                pending.append(c)
            continue
        if s.startswith("//"):
            i += 1
            continue
        # A declaration: up to the ';' at brace depth 0, or a #define's last continued line.
        decl = []
        if s.startswith("#"):
            while True:
                decl.append(lines[i])
                if not lines[i].rstrip().endswith("\\"):
                    break
                i += 1
            i += 1
        else:
            depth = 0
            while i < n:
                decl.append(lines[i])
                code = re.sub(r"/\*.*?\*/", "", lines[i])
                depth += code.count("{") - code.count("}")
                i += 1
                if depth == 0 and code.rstrip().endswith(";"):
                    break
        code = "\n".join(decl)
        name = _name_of(code.strip())
        if code.strip().startswith("#") and name in skip_defines:
            pending = []
            continue
        sections[-1][1].append((name, "\n\n".join(pending), code))
        pending = []
    return file_comment, [(t, items) for t, items in sections if items]
