"""The one way anything is journaled (``write_path``) and the lanes that drain the journal into the applier."""
