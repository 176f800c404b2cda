"""The generated parts of the documentation pages (``perfkit docs --write``): the blocks written from the
chapters' registries and committed results (:mod:`.blocks`), and the page of machines (:mod:`.machines`). Above
the chapters, whose registries and ledgers they read."""
