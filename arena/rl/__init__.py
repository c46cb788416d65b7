"""Train a bot, then enter it: a PettingZoo environment over the rules engine.

``arena.rl.encode`` turns a seat's ``PlayerView`` into numbers and back (numpy only; a bot
uses it to play a trained policy through the SDK); ``arena.rl.env`` is the environment
(needs ``pip install 'gin-arena[rl]'``). See docs/training.md.
"""
