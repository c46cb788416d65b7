"""Tournaments and the ladder, built on the arena.

``config`` reads a TOML config; ``formats`` makes the schedules of duplicate deals and the
SPRT; ``runner`` plays a schedule (over gRPC, or in process through ``inproc``) into a
``store``; ``ratings`` keeps live openskill ratings and fits the final standings; ``report``
prints and exports them; ``ladder`` is the long-running ladder server; ``commands`` is what
the CLI's tournament, standings, ladder and register do. See docs/tournaments.md.
"""
