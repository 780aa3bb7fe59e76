"""A small web shop in the spirit of WebArena's OneStopShop (see app.py for the URLs)."""
