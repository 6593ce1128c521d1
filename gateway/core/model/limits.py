"""The limits on what an agent may send (sizes, counts, lengths): every field is checked against
them before anything is stored (``writing/inputs.py`` and the use cases). Built with the settings
(the gateway's ``Settings.limits``) and passed down."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    max_content_chars: int = 8_000
    max_metadata_entries: int = 32
    max_metadata_key_chars: int = 64
    max_metadata_value_chars: int = 1_024
    max_evidence_items: int = 16
    max_batch_items: int = 500
    max_top_k: int = 100
    max_token_budget: int = 8_192
    max_entities: int = 32
    max_entity_chars: int = 256
    #: session, task and idempotency ids (ids also have a charset: letters, digits, . _ : @ -)
    max_id_chars: int = 128
    # recall (and MatchSkill): the query and how wide one recall may reach
    max_query_chars: int = 2_000
    max_recall_namespaces: int = 32
    max_recall_types: int = 32
    # session state (UpdateSessionState): per update and per session
    max_state_key_chars: int = 128
    max_state_value_bytes: int = 65_536
    max_state_set_keys: int = 64
    max_state_remove_keys: int = 256
    max_state_keys: int = 256
    max_state_bytes: int = 1_048_576
    #: per sub-agent, across every session whose state it last changed (issue 33 M8)
    max_agent_state_keys: int = 2_048
    max_agent_state_bytes: int = 8_388_608
    # graph relations, tasks, results
    max_relation_properties: int = 16
    max_property_chars: int = 1_024
    max_task_steps: int = 1_000
    max_step_name_chars: int = 256
    max_step_output_chars: int = 4_000
    max_step_error_chars: int = 2_000
    max_artifacts: int = 50
    max_decisions: int = 16
