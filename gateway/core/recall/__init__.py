"""The read side: permissions and cache (``recall``), the pipeline (``recall_engine``), fusion, scoring and the memory block, time cues, query batching, audit of reads, answers as of a past time."""
