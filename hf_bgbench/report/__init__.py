"""The report card: every benchmark's headline numbers for one model, in one document.

:func:`~hf_bgbench.report.card.run_report` runs the tasks each benchmark's spec lists in its
``report`` (:class:`~hf_bgbench.spec.Headline`) over the data it has, and writes
``report.json`` (schema-versioned, embedding each task's results document), ``report.md`` (a
model-card section), ``reliance_profile.png`` and ``.eval_results/<benchmark>.yaml`` (the
Hub's evaluation-results format). :mod:`~hf_bgbench.report.compare` compares two runs of the
same data image by image; :mod:`~hf_bgbench.report.hub` puts reports and per-image
predictions on the Hub. Nothing here names a benchmark: each spec says what to report.
"""
