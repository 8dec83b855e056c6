"""check_links.py - offline link check of the built site and of README.md: every relative href/src of every HTML
page must name a file of the site, and every #fragment an id in that page; every relative link of README.md must
name a file of the repository (and, for a docs/*.md page with #fragment, the heading id mkdocs gives it).
External links (http, https, mailto) are not fetched. usage: check_links.py SITE_DIR README.md"""
import os
import re
import sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        for k in ("href", "src"):
            if a.get(k) is not None and not (tag == "link" and a.get("rel") in ("canonical",)):
                self.links.append(a[k])


def parse(path):
    p = Page()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def resolve(site, page_path, target):
    """The file a URL path names from page_path: relative to the page, or to the site's root when it starts with
    '/' (mkdocs' 404 page); a directory URL means its index.html."""
    if target.startswith("/"):
        path = os.path.normpath(os.path.join(site, unquote(target).lstrip("/")))
    else:
        path = os.path.normpath(os.path.join(os.path.dirname(page_path), unquote(target))) if target else page_path
    if os.path.isdir(path):
        path = os.path.join(path, "index.html")
    return path


def check_site(site):
    pages, errors = {}, []
    for d, _, files in os.walk(site):
        for fn in files:
            if fn.endswith(".html"):
                pages[os.path.join(d, fn)] = parse(os.path.join(d, fn))
    if not pages:
        return [f"{site}: no HTML pages"], 0
    n = 0
    for path, page in pages.items():
        for link in page.links:
            u = urlsplit(link)
            if u.scheme or link.startswith("//") or link.startswith("data:"):
                continue
            n += 1
            target = resolve(site, path, u.path)
            rel = os.path.relpath(path, site)
            if not os.path.abspath(target).startswith(site + os.sep):
                errors.append(f"{rel}: link {link!r} leaves the site")
            elif not os.path.exists(target):
                errors.append(f"{rel}: link {link!r}: no such file")
            elif u.fragment and target.endswith(".html"):
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(u.fragment) not in ids:
                    errors.append(f"{rel}: link {link!r}: no anchor #{u.fragment} there")
    return errors, n


def slug(heading):
    """The id Python-Markdown's toc extension gives a heading (mkdocs' default slugify)."""
    s = re.sub(r"[`*_]", "", heading).strip().lower()
    s = re.sub(r"[^\w\s-]", "", s)
    return re.sub(r"[-\s]+", "-", s).strip("-")


def check_readme(readme):
    root = os.path.dirname(os.path.abspath(readme))
    errors, n = [], 0
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
        link = m.group(1)
        u = urlsplit(link)
        if u.scheme:
            continue
        n += 1
        path = os.path.join(root, unquote(u.path)) if u.path else os.path.abspath(readme)
        if not os.path.exists(path):
            errors.append(f"README.md: link {link!r}: no such file")
        elif u.fragment and path.endswith(".md"):
            with open(path, encoding="utf-8") as f:
                ids = {slug(h) for h in re.findall(r"^#+\s+(.*?)\s*$", f.read(), re.M)}
            if u.fragment not in ids:
                errors.append(f"README.md: link {link!r}: no heading #{u.fragment} there")
    return errors, n


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_links.py SITE_DIR README.md")
    e1, n1 = check_site(os.path.abspath(sys.argv[1]))
    e2, n2 = check_readme(sys.argv[2])
    for e in e1 + e2:
        print(f"check_links.py: {e}", file=sys.stderr)
    if e1 or e2:
        sys.exit(f"check_links.py: {len(e1) + len(e2)} broken links")
    print(f"check_links.py: {n1} internal links of the site and {n2} of README.md resolve")


if __name__ == "__main__":
    main()
