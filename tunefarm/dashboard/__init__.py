"""A live, read-only web page over a study (or several): ``tunefarm dashboard --db DB [--db DB ...]``.

What it shows (refreshing every few seconds): jobs and their liveness, the per-job task table, best-so-far
curves against trials and wall time, throughput, per task the top-k programs as ``sch.*`` calls (ranked as
``tunefarm best`` ranks them, confirmed figures shown) and latency against each sampling decision, and per
host the records, errors and median build / run times.

Choices, and why:

* **Server: the standard library's ``http.server``** (``server.py``). Two JSON endpoints and four static
  files, read by a few people polling every few seconds, need routing of five paths and nothing else; a
  framework would add a dependency (and aiohttp's async model buys nothing when every answer is a blocking
  database read). One worker thread owns the database connection, so reads never race.
* **Charts: hand-written SVG** (``static/charts.js``, about 250 lines): the page draws step lines, lines and
  a categorical scatter with log axes; a vendored library (uPlot, Chart.js) would be as large as the whole
  page and would need its license kept beside it. Everything is served from the installed package: no CDN,
  no fonts, nothing from the network.
* **Incremental reads** (``study.py``): records are append-only, so a refresh reads rows with an id above the
  last one seen and folds them into running aggregates; all SQL lives in ``queries.py``, portable, over the
  store's DB-API connection: an SQLite file, or a PostgreSQL URL (``pg_queries.py``, which also re-reads ids
  that commit after larger ones).
* **Several studies** (``--db mine.sqlite --db postgresql://...``, ``layered.py``): each refreshes on its own,
  and the page shows their union by ``LayeredDatabase``'s rules (workloads by key, the top-k merged as its
  ``top_k`` merges, a job imported into a later study shown once), so it agrees with ``tunefarm best``; one
  that cannot be read is named in one line while the others show. One study is read as before, alone.
* **Safety**: the connection is read-only, every endpoint is a GET that reads the study, static files come
  from a fixed allowlist, names reach the page only as text (``textContent``) and a Content-Security-Policy
  forbids inline script; the server binds 127.0.0.1 unless told otherwise.
"""
from tunefarm.dashboard.server import DashboardServer

__all__ = ["DashboardServer"]
