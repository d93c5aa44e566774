"""The benchmark of `nox -s bench`: `driver` (run by nox: environments, rounds, comparison and
the page docs/bench.md, with `page`) and `probe` (run inside each SDK environment, stdlib only)."""
