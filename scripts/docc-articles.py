#!/usr/bin/env python3
"""The DocC articles that mirror docs/*.md: writes them (--write) or checks they are current (default).

Each mirrored article is its docs/ page with a DocC title, abstract and "## Overview" heading, and its
links to other mirrored pages turned into <doc:…> links, so the guides and the repository's docs cannot
drift apart: scripts/build-docs.sh runs the check, and `scripts/docc-articles.py --write` brings the
articles up to date after a docs/ page changed.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (docs page, catalog, article name, title, abstract)
MIRRORS = [
    ("docs/Operators.md", "Sources/SyncStreams/SyncStreams.docc", "Operators", "Operators",
     "Every operator's semantics, with marble tables, and which thread calls a subscriber."),
    ("docs/MigratingFromCombine.md", "Sources/SyncStreams/SyncStreams.docc", "MigratingFromCombine",
     "Migrating from Combine",
     "Combine's types and operators beside SyncStreams', with the difference in one line each."),
    ("docs/Monitoring.md", "Sources/SyncEngine/SyncEngine.docc", "MonitoringSync", "Monitoring sync",
     "One `SyncStatus` answers what a status bar needs: connected, syncing, pending work, last synced, "
     "why offline, the last error."),
    ("docs/MigratingFromRealm.md", "Sources/SyncEngine/SyncEngine.docc", "MigratingFromRealm",
     "Migrating from Realm",
     "Realm Swift's sync-session API beside SyncEngine's, line by line, and the questions Realm cannot "
     "answer."),
]

# Links in docs/ pages and what they become in an article.
LINKS = {
    "SyncStreams.docc": [("[Operators.md](Operators.md)", "<doc:Operators>")],
    "SyncEngine.docc": [
        ("(see the README, \"Testing your app's sync\")", "(see <doc:TestingWithTheSimulator>)"),
        ("[SyncStatusComparison.md](SyncStatusComparison.md)", "`docs/SyncStatusComparison.md` in the repository"),
        ("[MigratingFromRealm.md](MigratingFromRealm.md)", "<doc:MigratingFromRealm>"),
        ("[Monitoring.md](Monitoring.md)", "<doc:MonitoringSync>"),
    ],
}


def article(page, catalog, title, abstract):
    text = (ROOT / page).read_text()
    lines = text.split("\n")
    if not lines[0].startswith("# "):
        sys.exit(f"{page}: the first line must be its '# ' title")
    body = "\n".join(lines[1:])
    for old, new in LINKS[pathlib.Path(catalog).name]:
        body = body.replace(old, new)
    return f"# {title}\n\n{abstract}\n\n## Overview\n{body}"


def main():
    write = "--write" in sys.argv[1:]
    stale = []
    for page, catalog, name, title, abstract in MIRRORS:
        path = ROOT / catalog / f"{name}.md"
        expected = article(page, catalog, title, abstract)
        if path.exists() and path.read_text() == expected:
            continue
        if write:
            path.write_text(expected)
            print(f"wrote {path.relative_to(ROOT)} from {page}")
        else:
            stale.append(f"{path.relative_to(ROOT)} (from {page})")
    if stale:
        print("error: DocC articles out of date with docs/: " + ", ".join(stale), file=sys.stderr)
        print("run scripts/docc-articles.py --write", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
