"""The write-side use cases: validating and preparing writes, proposals, working memory, write results."""
