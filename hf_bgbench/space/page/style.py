"""The page's look: the style sheet the app launches with (``demo.launch(css=CSS)``) -- the
status line's box, tables that scroll sideways instead of squeezing their columns, Explore's
tiles and captions whole, download names whole, and a phone's layout."""

CSS = """
#job-status { min-height: 3.2em; padding: 0.4em 0.8em; border-radius: 6px;
  background: var(--block-background-fill); border: 1px solid var(--border-color-primary); }
#report { min-height: 4.5em; }
#report table, #leaderboard table, #leaderboard-other table { font-size: 0.9em; }
#leaderboard table, #leaderboard td, #leaderboard th, #leaderboard span,
#leaderboard-other table, #leaderboard-other td, #leaderboard-other th,
#leaderboard-other span { font-family: var(--font); }
#report table, #compare-report table { display: block; overflow-x: auto; width: fit-content;
  max-width: 100%; }
#report th { overflow-wrap: anywhere; }
.bgbench-scroll { overflow-x: auto; max-width: 100%; }
/* Explore's tiles: every row shown (no box of fixed height to scroll in), each caption --
   the mark, the class, the confidence -- whole, on as many lines as it takes */
#explore-gallery .grid-wrap { height: auto !important; max-height: none !important; }
#explore-gallery .caption-label { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; max-width: none !important; }
/* a download's whole name, on two lines if it must (Gradio cuts the middle of a long one:
   mixed_same.parquet and mixed_rand.parquet both read "mixed… .parquet") */
.filename { flex-wrap: wrap !important; overflow: visible !important; }
.filename .stem { white-space: normal !important; overflow: visible !important;
  overflow-wrap: anywhere; min-width: 0; }
/* a phone: a table keeps its columns readable and scrolls sideways (a header squeezed to
   one character per line reads as nothing); the boards keep a width their columns fit */
@media (max-width: 640px) {
  #report th, #report td, #compare-report th, #compare-report td {
    overflow-wrap: normal; white-space: nowrap; }
  #leaderboard .table-container, #leaderboard-other .table-container { overflow-x: auto; }
  #leaderboard .table-wrap, #leaderboard-other .table-wrap { min-width: 960px; }
  /* two tiles a row, wide enough for their captions */
  #explore-gallery .grid-container { grid-template-columns: repeat(2, minmax(0, 1fr)) !important; }
  /* every tab's name on the bar, none behind a "more" menu: Gradio moves a tab there when
     the bar's buttons, measured with these same styles, do not fit */
  .tab-wrapper .tab-container button { padding: 0.3em 0.45em; font-size: 0.8em; }
}
"""
