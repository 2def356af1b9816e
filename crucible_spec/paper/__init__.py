"""The yellowpaper, generated from the registry and the spec modules (design §8).

`build.render_paper` makes every file of `papers/` in memory; `build.check` compares them with
what is on disk. Nothing in the paper is written by hand except the chapter plan in `chapters`.
"""
