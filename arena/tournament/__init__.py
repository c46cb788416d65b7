"""Tournament and ladder front ends over the series layer (``arena.series``).

``config`` reads a TOML config; ``formats`` says who meets whom; ``sprt`` decides a
head-to-head; ``runner`` plays a tournament through the series layer into a store;
``ratings`` fits the final standings and ``report`` prints and exports them; ``ladder`` is
a ladder front end, ``matchmaker`` pairs the bots of every front end, ``registry`` keeps
their tokens; ``commands`` is what the CLI's tournament, standings, ladder and register do.
See docs/tournaments.md.
"""
