"""The generate side: every file derived from the catalogue (validators, the matcher's index, the
site's pages and scripts), written and checked by one loop (`files.py`). The commands are
`command.py` (`errkit generate`) and `docs.py` (`errkit docs`); importing a producer imports
neither."""
