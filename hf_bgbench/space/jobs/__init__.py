"""The Space's job machinery: how a job runs (:mod:`.running`: in a process of its own,
:mod:`.process`, forked from the job server, :mod:`.forkserver`), is queued and refused
(:mod:`.queueing`: one queue, a per-client limit; :mod:`.clients`: who a request comes
from), is followed (:mod:`.status`: the status line; :mod:`.progress`: the tasks' progress
bars) and is reused (:mod:`.finished_runs`)."""
