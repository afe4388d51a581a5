"""Preloaded by the fork server of :mod:`zero_text._mathpool`: math-verify warm before any fork."""

from ._mathpool import warm_up

warm_up()
