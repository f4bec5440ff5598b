"""The Space's page: the layout of its tabs (:mod:`.demo`), its style sheet (:mod:`.style`),
the controls several tabs share (:mod:`.controls`) and one module per tab, its controls and
callbacks. A tab runs its work as a job (:mod:`hf_bgbench.space.jobs`), checks what a
visitor entered with :mod:`hf_bgbench.space.checks` and shows the result with
:mod:`hf_bgbench.space.views`; it imports nothing of the tasks."""
