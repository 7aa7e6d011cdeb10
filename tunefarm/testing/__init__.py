"""Support for tests, benchmarks and fault drills; the library never imports this package.

- ``simulate``: a measure handler that simulates building and timing (and fails for real on request), for
  capacity planning and drills with the production farm machinery around it;
- ``handlers``: small work-item handlers (echo, spin, crash, hang, raise, hold the timing lock...);
- ``drills``: what a drill needs to know about a farm's workers (process ids, nodes, items in flight);
- ``synthetic_study``: a study of any size with real sampled traces, for the dashboard's tests and benchmark.
- ``netns``, ``netns_cluster``, ``netns_gcs``: test hosts in network namespaces on one machine and a Ray
  cluster on them (token authentication, a host killed, cut off, drained, added) for the multi-host drills;
- ``job_audit``: what a drill checks in a job's database (budget, repeats, lost measurements, hosts).
"""
