"""Following a run: its log as a byte stream into a local copy (:mod:`.stream`), decoded for
the screen (:mod:`.decode`), its phases (:mod:`.phases`) and failure (:mod:`.failure`,
:mod:`.service_faults`) read; to its end (:mod:`.attach`); a service's start
(:mod:`.services`); ``runs`` / ``logs`` / ``stop`` as use cases (:mod:`.commands`). The top of
``runs/``."""
