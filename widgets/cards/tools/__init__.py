"""The tool cards, one module per tool family.

Importing this package imports every module in it, and each registers its card
(:func:`widgets.cards.card.register`): a card for a new tool is one new module
here and touches nothing else.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
