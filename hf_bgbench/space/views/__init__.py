"""What a result looks like in the Space: a finished run as a visitor reads and downloads
it (:mod:`.display`), one image in every variant (:mod:`.explore`), a few images per variant
(:mod:`.samples`), the images behind a gap (:mod:`.flips`; :mod:`.images` for all three), a
comparison of two models (:mod:`.compare`), a report card (:mod:`.report_card`), the
leaderboard's rows and tables (:mod:`.leaderboard`) and the ``bgbench`` command that
reproduces each (:mod:`.reproduce`). No Gradio here."""
