"""What the papers printed, and the checks of their claims (``DESIGN.md``, "The library").

One module per paper. The models in the rest of the library are what we believe is right; the
modules here hold what a paper wrote (a formula as printed, a reading of an ambiguous sentence)
and the sweeps that judge its claims under every reading we can defend. They import the models,
never the other way round.
"""
