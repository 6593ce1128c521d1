import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Layer(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LAYER_UNSPECIFIED: _ClassVar[Layer]
    WORKING: _ClassVar[Layer]
    EPISODIC: _ClassVar[Layer]
    SEMANTIC: _ClassVar[Layer]
    PROCEDURAL: _ClassVar[Layer]

class MemoryStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATUS_UNSPECIFIED: _ClassVar[MemoryStatus]
    ACTIVE: _ClassVar[MemoryStatus]
    SUPERSEDED: _ClassVar[MemoryStatus]
    ARCHIVED: _ClassVar[MemoryStatus]
    FORGOTTEN: _ClassVar[MemoryStatus]
    QUARANTINED: _ClassVar[MemoryStatus]
LAYER_UNSPECIFIED: Layer
WORKING: Layer
EPISODIC: Layer
SEMANTIC: Layer
PROCEDURAL: Layer
STATUS_UNSPECIFIED: MemoryStatus
ACTIVE: MemoryStatus
SUPERSEDED: MemoryStatus
ARCHIVED: MemoryStatus
FORGOTTEN: MemoryStatus
QUARANTINED: MemoryStatus

class Memory(_message.Message):
    __slots__ = ("id", "namespace", "layer", "type", "content", "importance", "confidence", "source_agent", "source_session", "task_id", "created_at", "updated_at", "last_accessed_at", "access_count", "version", "metadata", "evidence", "event_time", "status", "entities", "slot", "slot_value", "valid_from", "valid_to", "superseded_by")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_AGENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_SESSION_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    ACCESS_COUNT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    SLOT_VALUE_FIELD_NUMBER: _ClassVar[int]
    VALID_FROM_FIELD_NUMBER: _ClassVar[int]
    VALID_TO_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    id: str
    namespace: str
    layer: Layer
    type: str
    content: str
    importance: float
    confidence: float
    source_agent: str
    source_session: str
    task_id: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    last_accessed_at: _timestamp_pb2.Timestamp
    access_count: int
    version: int
    metadata: _containers.ScalarMap[str, str]
    evidence: _containers.RepeatedScalarFieldContainer[str]
    event_time: _timestamp_pb2.Timestamp
    status: MemoryStatus
    entities: _containers.RepeatedScalarFieldContainer[str]
    slot: str
    slot_value: str
    valid_from: _timestamp_pb2.Timestamp
    valid_to: _timestamp_pb2.Timestamp
    superseded_by: str
    def __init__(self, id: _Optional[str] = ..., namespace: _Optional[str] = ..., layer: _Optional[_Union[Layer, str]] = ..., type: _Optional[str] = ..., content: _Optional[str] = ..., importance: _Optional[float] = ..., confidence: _Optional[float] = ..., source_agent: _Optional[str] = ..., source_session: _Optional[str] = ..., task_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_accessed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., access_count: _Optional[int] = ..., version: _Optional[int] = ..., metadata: _Optional[_Mapping[str, str]] = ..., evidence: _Optional[_Iterable[str]] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., status: _Optional[_Union[MemoryStatus, str]] = ..., entities: _Optional[_Iterable[str]] = ..., slot: _Optional[str] = ..., slot_value: _Optional[str] = ..., valid_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., superseded_by: _Optional[str] = ...) -> None: ...

class WriteItem(_message.Message):
    __slots__ = ("namespace", "layer", "content", "type", "importance", "confidence", "session_id", "task_id", "event_time", "metadata", "evidence", "entities", "idempotency_key", "role", "zone")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ZONE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    layer: Layer
    content: str
    type: str
    importance: float
    confidence: float
    session_id: str
    task_id: str
    event_time: _timestamp_pb2.Timestamp
    metadata: _containers.ScalarMap[str, str]
    evidence: _containers.RepeatedScalarFieldContainer[str]
    entities: _containers.RepeatedScalarFieldContainer[str]
    idempotency_key: str
    role: str
    zone: str
    def __init__(self, namespace: _Optional[str] = ..., layer: _Optional[_Union[Layer, str]] = ..., content: _Optional[str] = ..., type: _Optional[str] = ..., importance: _Optional[float] = ..., confidence: _Optional[float] = ..., session_id: _Optional[str] = ..., task_id: _Optional[str] = ..., event_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ..., evidence: _Optional[_Iterable[str]] = ..., entities: _Optional[_Iterable[str]] = ..., idempotency_key: _Optional[str] = ..., role: _Optional[str] = ..., zone: _Optional[str] = ...) -> None: ...

class WriteRequest(_message.Message):
    __slots__ = ("item", "wait")
    ITEM_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    item: WriteItem
    wait: bool
    def __init__(self, item: _Optional[_Union[WriteItem, _Mapping]] = ..., wait: _Optional[bool] = ...) -> None: ...

class WriteResult(_message.Message):
    __slots__ = ("id", "duplicate", "applied", "journal_seq", "redactions", "quarantined", "skipped", "proposal_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_SEQ_FIELD_NUMBER: _ClassVar[int]
    REDACTIONS_FIELD_NUMBER: _ClassVar[int]
    QUARANTINED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    duplicate: bool
    applied: bool
    journal_seq: int
    redactions: _containers.RepeatedScalarFieldContainer[str]
    quarantined: bool
    skipped: str
    proposal_id: str
    def __init__(self, id: _Optional[str] = ..., duplicate: _Optional[bool] = ..., applied: _Optional[bool] = ..., journal_seq: _Optional[int] = ..., redactions: _Optional[_Iterable[str]] = ..., quarantined: _Optional[bool] = ..., skipped: _Optional[str] = ..., proposal_id: _Optional[str] = ...) -> None: ...

class WriteResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: WriteResult
    def __init__(self, result: _Optional[_Union[WriteResult, _Mapping]] = ...) -> None: ...

class BatchWriteRequest(_message.Message):
    __slots__ = ("items", "wait")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[WriteItem]
    wait: bool
    def __init__(self, items: _Optional[_Iterable[_Union[WriteItem, _Mapping]]] = ..., wait: _Optional[bool] = ...) -> None: ...

class BatchWriteResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[WriteResult]
    def __init__(self, results: _Optional[_Iterable[_Union[WriteResult, _Mapping]]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("query", "namespaces", "layers", "top_k", "token_budget", "session_id", "start", "end", "types", "as_of")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    query: str
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    layers: _containers.RepeatedScalarFieldContainer[Layer]
    top_k: int
    token_budget: int
    session_id: str
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    types: _containers.RepeatedScalarFieldContainer[str]
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, query: _Optional[str] = ..., namespaces: _Optional[_Iterable[str]] = ..., layers: _Optional[_Iterable[_Union[Layer, str]]] = ..., top_k: _Optional[int] = ..., token_budget: _Optional[int] = ..., session_id: _Optional[str] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., types: _Optional[_Iterable[str]] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Hit(_message.Message):
    __slots__ = ("memory", "score", "similarity", "recency", "keyword")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    score: float
    similarity: float
    recency: float
    keyword: float
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ..., score: _Optional[float] = ..., similarity: _Optional[float] = ..., recency: _Optional[float] = ..., keyword: _Optional[float] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("hits", "memory_block", "block_tokens", "routed_layers", "degraded")
    HITS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BLOCK_FIELD_NUMBER: _ClassVar[int]
    BLOCK_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ROUTED_LAYERS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[Hit]
    memory_block: str
    block_tokens: int
    routed_layers: _containers.RepeatedScalarFieldContainer[Layer]
    degraded: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hits: _Optional[_Iterable[_Union[Hit, _Mapping]]] = ..., memory_block: _Optional[str] = ..., block_tokens: _Optional[int] = ..., routed_layers: _Optional[_Iterable[_Union[Layer, str]]] = ..., degraded: _Optional[_Iterable[str]] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ...) -> None: ...

class HistoryRequest(_message.Message):
    __slots__ = ("id", "as_of")
    ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    id: str
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class HistoryResponse(_message.Message):
    __slots__ = ("versions",)
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, versions: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class ForgetRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ForgetResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Memory
    def __init__(self, memory: _Optional[_Union[Memory, _Mapping]] = ...) -> None: ...

class ForgetNamespaceRequest(_message.Message):
    __slots__ = ("namespace", "reason", "wait")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    reason: str
    wait: bool
    def __init__(self, namespace: _Optional[str] = ..., reason: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class ForgetSubjectRequest(_message.Message):
    __slots__ = ("user_id", "reason", "wait")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    reason: str
    wait: bool
    def __init__(self, user_id: _Optional[str] = ..., reason: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class EraseResponse(_message.Message):
    __slots__ = ("erase_id", "applied")
    ERASE_ID_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    erase_id: str
    applied: bool
    def __init__(self, erase_id: _Optional[str] = ..., applied: _Optional[bool] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("id", "role", "content", "zone", "at", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ZONE_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    role: str
    content: str
    zone: str
    at: _timestamp_pb2.Timestamp
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, id: _Optional[str] = ..., role: _Optional[str] = ..., content: _Optional[str] = ..., zone: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class AppendTurnRequest(_message.Message):
    __slots__ = ("namespace", "session_id", "role", "content", "zone", "metadata", "idempotency_key", "at")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ZONE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    role: str
    content: str
    zone: str
    metadata: _containers.ScalarMap[str, str]
    idempotency_key: str
    at: _timestamp_pb2.Timestamp
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ..., role: _Optional[str] = ..., content: _Optional[str] = ..., zone: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., idempotency_key: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AppendTurnsRequest(_message.Message):
    __slots__ = ("turns",)
    TURNS_FIELD_NUMBER: _ClassVar[int]
    turns: _containers.RepeatedCompositeFieldContainer[AppendTurnRequest]
    def __init__(self, turns: _Optional[_Iterable[_Union[AppendTurnRequest, _Mapping]]] = ...) -> None: ...

class AppendTurnsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AppendTurnResponse]
    def __init__(self, results: _Optional[_Iterable[_Union[AppendTurnResponse, _Mapping]]] = ...) -> None: ...

class AppendTurnResponse(_message.Message):
    __slots__ = ("id", "duplicate", "compacted", "dialogue_length", "redactions", "proposal_id", "quarantined")
    ID_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_FIELD_NUMBER: _ClassVar[int]
    DIALOGUE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    REDACTIONS_FIELD_NUMBER: _ClassVar[int]
    PROPOSAL_ID_FIELD_NUMBER: _ClassVar[int]
    QUARANTINED_FIELD_NUMBER: _ClassVar[int]
    id: str
    duplicate: bool
    compacted: bool
    dialogue_length: int
    redactions: _containers.RepeatedScalarFieldContainer[str]
    proposal_id: str
    quarantined: bool
    def __init__(self, id: _Optional[str] = ..., duplicate: _Optional[bool] = ..., compacted: _Optional[bool] = ..., dialogue_length: _Optional[int] = ..., redactions: _Optional[_Iterable[str]] = ..., proposal_id: _Optional[str] = ..., quarantined: _Optional[bool] = ...) -> None: ...

class GetWindowRequest(_message.Message):
    __slots__ = ("namespace", "session_id", "zones")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    zones: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ..., zones: _Optional[_Iterable[str]] = ...) -> None: ...

class GetWindowResponse(_message.Message):
    __slots__ = ("turns", "degraded")
    TURNS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    turns: _containers.RepeatedCompositeFieldContainer[Turn]
    degraded: bool
    def __init__(self, turns: _Optional[_Iterable[_Union[Turn, _Mapping]]] = ..., degraded: _Optional[bool] = ...) -> None: ...

class GetSessionStateRequest(_message.Message):
    __slots__ = ("namespace", "session_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class UpdateSessionStateRequest(_message.Message):
    __slots__ = ("namespace", "session_id", "set", "remove")
    class SetEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    REMOVE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    set: _containers.ScalarMap[str, str]
    remove: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ..., set: _Optional[_Mapping[str, str]] = ..., remove: _Optional[_Iterable[str]] = ...) -> None: ...

class SessionState(_message.Message):
    __slots__ = ("values", "ttl_seconds")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    VALUES_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    values: _containers.ScalarMap[str, str]
    ttl_seconds: int
    def __init__(self, values: _Optional[_Mapping[str, str]] = ..., ttl_seconds: _Optional[int] = ...) -> None: ...

class CompactWindowRequest(_message.Message):
    __slots__ = ("namespace", "session_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class CompactWindowResponse(_message.Message):
    __slots__ = ("summarised", "summary")
    SUMMARISED_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summarised: int
    summary: str
    def __init__(self, summarised: _Optional[int] = ..., summary: _Optional[str] = ...) -> None: ...

class ClearScratchRequest(_message.Message):
    __slots__ = ("namespace", "session_id")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class ClearScratchResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EndSessionRequest(_message.Message):
    __slots__ = ("namespace", "session_id", "wait")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    session_id: str
    wait: bool
    def __init__(self, namespace: _Optional[str] = ..., session_id: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class EndSessionResponse(_message.Message):
    __slots__ = ("job_id", "turns", "duplicate", "applied", "extractor", "outcomes")
    class OutcomesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    turns: int
    duplicate: bool
    applied: bool
    extractor: str
    outcomes: _containers.ScalarMap[str, int]
    def __init__(self, job_id: _Optional[str] = ..., turns: _Optional[int] = ..., duplicate: _Optional[bool] = ..., applied: _Optional[bool] = ..., extractor: _Optional[str] = ..., outcomes: _Optional[_Mapping[str, int]] = ...) -> None: ...

class RecordEventRequest(_message.Message):
    __slots__ = ("event", "user_id", "links", "wait")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    event: WriteItem
    user_id: str
    links: _containers.RepeatedCompositeFieldContainer[Link]
    wait: bool
    def __init__(self, event: _Optional[_Union[WriteItem, _Mapping]] = ..., user_id: _Optional[str] = ..., links: _Optional[_Iterable[_Union[Link, _Mapping]]] = ..., wait: _Optional[bool] = ...) -> None: ...

class NodeRef(_message.Message):
    __slots__ = ("kind", "id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    kind: str
    id: str
    def __init__(self, kind: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class Link(_message.Message):
    __slots__ = ("type", "target")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    type: str
    target: NodeRef
    def __init__(self, type: _Optional[str] = ..., target: _Optional[_Union[NodeRef, _Mapping]] = ...) -> None: ...

class RelateRequest(_message.Message):
    __slots__ = ("src", "type", "dst", "at", "properties")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SRC_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DST_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    src: NodeRef
    type: str
    dst: NodeRef
    at: _timestamp_pb2.Timestamp
    properties: _containers.ScalarMap[str, str]
    def __init__(self, src: _Optional[_Union[NodeRef, _Mapping]] = ..., type: _Optional[str] = ..., dst: _Optional[_Union[NodeRef, _Mapping]] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RelateResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class TimelineRequest(_message.Message):
    __slots__ = ("namespace", "start", "end", "limit", "types")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    limit: int
    types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ..., types: _Optional[_Iterable[str]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("id", "namespace", "type", "summary", "at", "importance", "agent_id", "user_id", "session_id", "task_id", "entities")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    id: str
    namespace: str
    type: str
    summary: str
    at: _timestamp_pb2.Timestamp
    importance: float
    agent_id: str
    user_id: str
    session_id: str
    task_id: str
    entities: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., namespace: _Optional[str] = ..., type: _Optional[str] = ..., summary: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., importance: _Optional[float] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., task_id: _Optional[str] = ..., entities: _Optional[_Iterable[str]] = ...) -> None: ...

class TimelineResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class NeighbourhoodRequest(_message.Message):
    __slots__ = ("node", "depth", "limit")
    NODE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    node: NodeRef
    depth: int
    limit: int
    def __init__(self, node: _Optional[_Union[NodeRef, _Mapping]] = ..., depth: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class Neighbour(_message.Message):
    __slots__ = ("node", "relation", "at", "distance", "label")
    NODE_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    DISTANCE_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    node: NodeRef
    relation: str
    at: _timestamp_pb2.Timestamp
    distance: int
    label: str
    def __init__(self, node: _Optional[_Union[NodeRef, _Mapping]] = ..., relation: _Optional[str] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., distance: _Optional[int] = ..., label: _Optional[str] = ...) -> None: ...

class NeighbourhoodResponse(_message.Message):
    __slots__ = ("neighbours",)
    NEIGHBOURS_FIELD_NUMBER: _ClassVar[int]
    neighbours: _containers.RepeatedCompositeFieldContainer[Neighbour]
    def __init__(self, neighbours: _Optional[_Iterable[_Union[Neighbour, _Mapping]]] = ...) -> None: ...

class ProposeFactRequest(_message.Message):
    __slots__ = ("namespace", "fact", "session_id", "evidence", "confidence", "explicit")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    FACT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    fact: str
    session_id: str
    evidence: _containers.RepeatedScalarFieldContainer[str]
    confidence: float
    explicit: bool
    def __init__(self, namespace: _Optional[str] = ..., fact: _Optional[str] = ..., session_id: _Optional[str] = ..., evidence: _Optional[_Iterable[str]] = ..., confidence: _Optional[float] = ..., explicit: _Optional[bool] = ...) -> None: ...

class ProposeFactResponse(_message.Message):
    __slots__ = ("pending_id", "sessions_seen", "promoted", "memory_id")
    PENDING_ID_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_SEEN_FIELD_NUMBER: _ClassVar[int]
    PROMOTED_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    pending_id: str
    sessions_seen: int
    promoted: bool
    memory_id: str
    def __init__(self, pending_id: _Optional[str] = ..., sessions_seen: _Optional[int] = ..., promoted: _Optional[bool] = ..., memory_id: _Optional[str] = ...) -> None: ...

class ConfirmFactRequest(_message.Message):
    __slots__ = ("pending_id",)
    PENDING_ID_FIELD_NUMBER: _ClassVar[int]
    pending_id: str
    def __init__(self, pending_id: _Optional[str] = ...) -> None: ...

class ListPendingFactsRequest(_message.Message):
    __slots__ = ("namespace", "limit")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    limit: int
    def __init__(self, namespace: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class PendingFact(_message.Message):
    __slots__ = ("id", "namespace", "fact", "sessions", "evidence", "confidence")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    FACT_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    id: str
    namespace: str
    fact: str
    sessions: _containers.RepeatedScalarFieldContainer[str]
    evidence: _containers.RepeatedScalarFieldContainer[str]
    confidence: float
    def __init__(self, id: _Optional[str] = ..., namespace: _Optional[str] = ..., fact: _Optional[str] = ..., sessions: _Optional[_Iterable[str]] = ..., evidence: _Optional[_Iterable[str]] = ..., confidence: _Optional[float] = ...) -> None: ...

class ListPendingFactsResponse(_message.Message):
    __slots__ = ("facts",)
    FACTS_FIELD_NUMBER: _ClassVar[int]
    facts: _containers.RepeatedCompositeFieldContainer[PendingFact]
    def __init__(self, facts: _Optional[_Iterable[_Union[PendingFact, _Mapping]]] = ...) -> None: ...

class Skill(_message.Message):
    __slots__ = ("name", "description", "trigger", "parameter_schema", "entry_point", "version", "namespace", "id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    PARAMETER_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    ENTRY_POINT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    trigger: str
    parameter_schema: str
    entry_point: str
    version: int
    namespace: str
    id: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., trigger: _Optional[str] = ..., parameter_schema: _Optional[str] = ..., entry_point: _Optional[str] = ..., version: _Optional[int] = ..., namespace: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class RegisterSkillRequest(_message.Message):
    __slots__ = ("skill",)
    SKILL_FIELD_NUMBER: _ClassVar[int]
    skill: Skill
    def __init__(self, skill: _Optional[_Union[Skill, _Mapping]] = ...) -> None: ...

class RegisterSkillResponse(_message.Message):
    __slots__ = ("skill", "duplicate")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    skill: Skill
    duplicate: bool
    def __init__(self, skill: _Optional[_Union[Skill, _Mapping]] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class MatchSkillRequest(_message.Message):
    __slots__ = ("intent", "namespaces", "top_k")
    INTENT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    intent: str
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    top_k: int
    def __init__(self, intent: _Optional[str] = ..., namespaces: _Optional[_Iterable[str]] = ..., top_k: _Optional[int] = ...) -> None: ...

class SkillMatch(_message.Message):
    __slots__ = ("skill", "score")
    SKILL_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    skill: Skill
    score: float
    def __init__(self, skill: _Optional[_Union[Skill, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class MatchSkillResponse(_message.Message):
    __slots__ = ("matches",)
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[SkillMatch]
    def __init__(self, matches: _Optional[_Iterable[_Union[SkillMatch, _Mapping]]] = ...) -> None: ...

class MemoryUpdate(_message.Message):
    __slots__ = ("item",)
    ITEM_FIELD_NUMBER: _ClassVar[int]
    item: WriteItem
    def __init__(self, item: _Optional[_Union[WriteItem, _Mapping]] = ...) -> None: ...

class SubmitResultRequest(_message.Message):
    __slots__ = ("task_id", "status", "summary", "artifacts", "decisions", "memory_updates", "session_id", "idempotency_key")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_UPDATES_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    status: str
    summary: str
    artifacts: _containers.RepeatedScalarFieldContainer[str]
    decisions: _containers.RepeatedScalarFieldContainer[str]
    memory_updates: _containers.RepeatedCompositeFieldContainer[MemoryUpdate]
    session_id: str
    idempotency_key: str
    def __init__(self, task_id: _Optional[str] = ..., status: _Optional[str] = ..., summary: _Optional[str] = ..., artifacts: _Optional[_Iterable[str]] = ..., decisions: _Optional[_Iterable[str]] = ..., memory_updates: _Optional[_Iterable[_Union[MemoryUpdate, _Mapping]]] = ..., session_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class SubmitResultResponse(_message.Message):
    __slots__ = ("event_id", "committed", "proposals")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    PROPOSALS_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    committed: _containers.RepeatedCompositeFieldContainer[WriteResult]
    proposals: _containers.RepeatedCompositeFieldContainer[Proposal]
    def __init__(self, event_id: _Optional[str] = ..., committed: _Optional[_Iterable[_Union[WriteResult, _Mapping]]] = ..., proposals: _Optional[_Iterable[_Union[Proposal, _Mapping]]] = ...) -> None: ...

class Proposal(_message.Message):
    __slots__ = ("id", "proposer", "item", "state", "decided_by", "reason", "created_at", "memory_id", "conflicts_with", "slot", "slot_value")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROPOSER_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    CONFLICTS_WITH_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    SLOT_VALUE_FIELD_NUMBER: _ClassVar[int]
    id: str
    proposer: str
    item: WriteItem
    state: str
    decided_by: str
    reason: str
    created_at: _timestamp_pb2.Timestamp
    memory_id: str
    conflicts_with: Memory
    slot: str
    slot_value: str
    def __init__(self, id: _Optional[str] = ..., proposer: _Optional[str] = ..., item: _Optional[_Union[WriteItem, _Mapping]] = ..., state: _Optional[str] = ..., decided_by: _Optional[str] = ..., reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., memory_id: _Optional[str] = ..., conflicts_with: _Optional[_Union[Memory, _Mapping]] = ..., slot: _Optional[str] = ..., slot_value: _Optional[str] = ...) -> None: ...

class ListProposalsRequest(_message.Message):
    __slots__ = ("state", "limit")
    STATE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    state: str
    limit: int
    def __init__(self, state: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ListProposalsResponse(_message.Message):
    __slots__ = ("proposals",)
    PROPOSALS_FIELD_NUMBER: _ClassVar[int]
    proposals: _containers.RepeatedCompositeFieldContainer[Proposal]
    def __init__(self, proposals: _Optional[_Iterable[_Union[Proposal, _Mapping]]] = ...) -> None: ...

class DecideProposalRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class SharedWritePolicy(_message.Message):
    __slots__ = ("auto_approve", "min_confidence")
    AUTO_APPROVE_FIELD_NUMBER: _ClassVar[int]
    MIN_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    auto_approve: _containers.RepeatedScalarFieldContainer[str]
    min_confidence: float
    def __init__(self, auto_approve: _Optional[_Iterable[str]] = ..., min_confidence: _Optional[float] = ...) -> None: ...

class Step(_message.Message):
    __slots__ = ("index", "name", "state", "output", "error", "attempts")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    index: int
    name: str
    state: str
    output: str
    error: str
    attempts: int
    def __init__(self, index: _Optional[int] = ..., name: _Optional[str] = ..., state: _Optional[str] = ..., output: _Optional[str] = ..., error: _Optional[str] = ..., attempts: _Optional[int] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("id", "steps", "resume_at", "state")
    ID_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    RESUME_AT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    steps: _containers.RepeatedCompositeFieldContainer[Step]
    resume_at: int
    state: str
    def __init__(self, id: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[Step, _Mapping]]] = ..., resume_at: _Optional[int] = ..., state: _Optional[str] = ...) -> None: ...

class StartTaskRequest(_message.Message):
    __slots__ = ("id", "steps")
    ID_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    id: str
    steps: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., steps: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdateStepRequest(_message.Message):
    __slots__ = ("task_id", "index", "state", "output", "error")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    index: int
    state: str
    output: str
    error: str
    def __init__(self, task_id: _Optional[str] = ..., index: _Optional[int] = ..., state: _Optional[str] = ..., output: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LayerStats(_message.Message):
    __slots__ = ("layer", "count", "latency_p50_ms", "latency_p99_ms", "calls", "failures", "breaker")
    LAYER_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    LATENCY_P50_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_P99_MS_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    layer: str
    count: int
    latency_p50_ms: float
    latency_p99_ms: float
    calls: int
    failures: int
    breaker: str
    def __init__(self, layer: _Optional[str] = ..., count: _Optional[int] = ..., latency_p50_ms: _Optional[float] = ..., latency_p99_ms: _Optional[float] = ..., calls: _Optional[int] = ..., failures: _Optional[int] = ..., breaker: _Optional[str] = ...) -> None: ...

class RecallStats(_message.Message):
    __slots__ = ("layer", "recalls", "hits", "hit_rate")
    LAYER_FIELD_NUMBER: _ClassVar[int]
    RECALLS_FIELD_NUMBER: _ClassVar[int]
    HITS_FIELD_NUMBER: _ClassVar[int]
    HIT_RATE_FIELD_NUMBER: _ClassVar[int]
    layer: Layer
    recalls: int
    hits: int
    hit_rate: float
    def __init__(self, layer: _Optional[_Union[Layer, str]] = ..., recalls: _Optional[int] = ..., hits: _Optional[int] = ..., hit_rate: _Optional[float] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("layers", "journal_pending", "journal_applied", "vectors", "memories", "embedder", "shards", "recall_cache_hits", "recall_cache_misses", "apply_lag_seconds", "recall", "languages", "languages_sampled", "embedder_advice")
    class MemoriesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class LanguagesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_PENDING_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_APPLIED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDER_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    RECALL_CACHE_HITS_FIELD_NUMBER: _ClassVar[int]
    RECALL_CACHE_MISSES_FIELD_NUMBER: _ClassVar[int]
    APPLY_LAG_SECONDS_FIELD_NUMBER: _ClassVar[int]
    RECALL_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_SAMPLED_FIELD_NUMBER: _ClassVar[int]
    EMBEDDER_ADVICE_FIELD_NUMBER: _ClassVar[int]
    layers: _containers.RepeatedCompositeFieldContainer[LayerStats]
    journal_pending: int
    journal_applied: int
    vectors: int
    memories: _containers.ScalarMap[str, int]
    embedder: str
    shards: int
    recall_cache_hits: int
    recall_cache_misses: int
    apply_lag_seconds: float
    recall: _containers.RepeatedCompositeFieldContainer[RecallStats]
    languages: _containers.ScalarMap[str, float]
    languages_sampled: int
    embedder_advice: str
    def __init__(self, layers: _Optional[_Iterable[_Union[LayerStats, _Mapping]]] = ..., journal_pending: _Optional[int] = ..., journal_applied: _Optional[int] = ..., vectors: _Optional[int] = ..., memories: _Optional[_Mapping[str, int]] = ..., embedder: _Optional[str] = ..., shards: _Optional[int] = ..., recall_cache_hits: _Optional[int] = ..., recall_cache_misses: _Optional[int] = ..., apply_lag_seconds: _Optional[float] = ..., recall: _Optional[_Iterable[_Union[RecallStats, _Mapping]]] = ..., languages: _Optional[_Mapping[str, float]] = ..., languages_sampled: _Optional[int] = ..., embedder_advice: _Optional[str] = ...) -> None: ...

class QueryAuditRequest(_message.Message):
    __slots__ = ("agent_id", "namespace", "since", "limit")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    namespace: str
    since: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, agent_id: _Optional[str] = ..., namespace: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class AuditEntry(_message.Message):
    __slots__ = ("at", "agent_id", "action", "namespace", "target", "detail")
    AT_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    agent_id: str
    action: str
    namespace: str
    target: str
    detail: str
    def __init__(self, at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_id: _Optional[str] = ..., action: _Optional[str] = ..., namespace: _Optional[str] = ..., target: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class QueryAuditResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[AuditEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[AuditEntry, _Mapping]]] = ...) -> None: ...

class BreakerStatesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BreakerState(_message.Message):
    __slots__ = ("layer", "state", "trips", "last_error")
    LAYER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TRIPS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    layer: str
    state: str
    trips: int
    last_error: str
    def __init__(self, layer: _Optional[str] = ..., state: _Optional[str] = ..., trips: _Optional[int] = ..., last_error: _Optional[str] = ...) -> None: ...

class BreakerStatesResponse(_message.Message):
    __slots__ = ("breakers",)
    BREAKERS_FIELD_NUMBER: _ClassVar[int]
    breakers: _containers.RepeatedCompositeFieldContainer[BreakerState]
    def __init__(self, breakers: _Optional[_Iterable[_Union[BreakerState, _Mapping]]] = ...) -> None: ...

class ListReviewRequest(_message.Message):
    __slots__ = ("limit",)
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    limit: int
    def __init__(self, limit: _Optional[int] = ...) -> None: ...

class ListReviewResponse(_message.Message):
    __slots__ = ("memories",)
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class MaintainRequest(_message.Message):
    __slots__ = ("namespaces", "threshold", "compact_min", "dry_run")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    COMPACT_MIN_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    threshold: float
    compact_min: int
    dry_run: bool
    def __init__(self, namespaces: _Optional[_Iterable[str]] = ..., threshold: _Optional[float] = ..., compact_min: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class MaintainResponse(_message.Message):
    __slots__ = ("namespaces", "examined", "archived", "summaries")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    EXAMINED_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    namespaces: int
    examined: int
    archived: _containers.RepeatedScalarFieldContainer[str]
    summaries: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespaces: _Optional[int] = ..., examined: _Optional[int] = ..., archived: _Optional[_Iterable[str]] = ..., summaries: _Optional[_Iterable[str]] = ...) -> None: ...

class ResolveReviewRequest(_message.Message):
    __slots__ = ("id", "approve", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    approve: bool
    reason: str
    def __init__(self, id: _Optional[str] = ..., approve: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class ExportRequest(_message.Message):
    __slots__ = ("namespaces", "include_vectors")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_VECTORS_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    include_vectors: bool
    def __init__(self, namespaces: _Optional[_Iterable[str]] = ..., include_vectors: _Optional[bool] = ...) -> None: ...

class GraphLink(_message.Message):
    __slots__ = ("src", "type", "dst", "at", "properties")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SRC_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DST_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    src: NodeRef
    type: str
    dst: NodeRef
    at: _timestamp_pb2.Timestamp
    properties: _containers.ScalarMap[str, str]
    def __init__(self, src: _Optional[_Union[NodeRef, _Mapping]] = ..., type: _Optional[str] = ..., dst: _Optional[_Union[NodeRef, _Mapping]] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ExportedMemory(_message.Message):
    __slots__ = ("versions", "fact_keys", "embedding", "embedder", "links")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    FACT_KEYS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDER_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[Memory]
    fact_keys: _containers.RepeatedScalarFieldContainer[str]
    embedding: _containers.RepeatedScalarFieldContainer[float]
    embedder: str
    links: _containers.RepeatedCompositeFieldContainer[GraphLink]
    def __init__(self, versions: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ..., fact_keys: _Optional[_Iterable[str]] = ..., embedding: _Optional[_Iterable[float]] = ..., embedder: _Optional[str] = ..., links: _Optional[_Iterable[_Union[GraphLink, _Mapping]]] = ...) -> None: ...

class ImportRequest(_message.Message):
    __slots__ = ("memories", "wait")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[ExportedMemory]
    wait: bool
    def __init__(self, memories: _Optional[_Iterable[_Union[ExportedMemory, _Mapping]]] = ..., wait: _Optional[bool] = ...) -> None: ...

class ImportResponse(_message.Message):
    __slots__ = ("imported", "unchanged", "reembedded", "links", "conflicts", "erased")
    IMPORTED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    REEMBEDDED_FIELD_NUMBER: _ClassVar[int]
    LINKS_FIELD_NUMBER: _ClassVar[int]
    CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    imported: int
    unchanged: int
    reembedded: int
    links: int
    conflicts: _containers.RepeatedScalarFieldContainer[str]
    erased: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, imported: _Optional[int] = ..., unchanged: _Optional[int] = ..., reembedded: _Optional[int] = ..., links: _Optional[int] = ..., conflicts: _Optional[_Iterable[str]] = ..., erased: _Optional[_Iterable[str]] = ...) -> None: ...

class ListNamespacesRequest(_message.Message):
    __slots__ = ("prefix", "limit")
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    limit: int
    def __init__(self, prefix: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ListNamespacesResponse(_message.Message):
    __slots__ = ("namespaces", "truncated")
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    namespaces: _containers.RepeatedScalarFieldContainer[str]
    truncated: bool
    def __init__(self, namespaces: _Optional[_Iterable[str]] = ..., truncated: _Optional[bool] = ...) -> None: ...
