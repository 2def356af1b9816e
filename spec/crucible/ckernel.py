"""Chapter 12: the CKernel taxonomy: 147 compute-op ids (u8) in two frozen sections.

Section 1 (ids 1..99) has been frozen since v3, section 2 is 100..146; OPAQUE (0) is every op
the registration table does not know.
"""

from __future__ import annotations

import enum

from ..core.layout import Member, enum_of, hash64, struct, u8


class CKernelId(enum.IntEnum):
    """Compute-op id (u8); NUM_KERNELS is the sentinel, not an op."""

    OPAQUE = 0
    GEMM_MM = 1
    GEMM_BMM = 2
    GEMM_MATMUL = 3
    GEMM_ADDMM = 4
    GEMM_LINEAR = 5
    GEMM_ADDBMM = 6
    GEMM_BADDBMM = 7
    GEMM_EINSUM = 8
    CONV1D = 9
    CONV2D = 10
    CONV3D = 11
    CONV_TRANSPOSE1D = 12
    CONV_TRANSPOSE2D = 13
    CONV_TRANSPOSE3D = 14
    SDPA = 15
    MHA = 16
    ROPE = 17
    POSITION_BIAS = 18
    LAYER_NORM = 19
    BATCH_NORM_TRAIN = 20
    BATCH_NORM_EVAL = 21
    GROUP_NORM = 22
    INSTANCE_NORM = 23
    RMS_NORM = 24
    ACT_RELU = 25
    ACT_GELU = 26
    ACT_SILU = 27
    ACT_SIGMOID = 28
    ACT_TANH = 29
    ACT_HARDSWISH = 30
    ACT_LEAKY_RELU = 31
    ACT_ELU = 32
    ACT_SOFTMAX = 33
    ACT_LOG_SOFTMAX = 34
    ACT_DROPOUT = 35
    ACT_CLAMP = 36
    ACT_MISH = 37
    EWISE_ADD = 38
    EWISE_MUL = 39
    EWISE_SUB = 40
    EWISE_DIV = 41
    EWISE_POW = 42
    EWISE_MAX = 43
    EWISE_MIN = 44
    EWISE_MOD = 45
    EWISE_WHERE = 46
    EWISE_EXP = 47
    EWISE_LOG = 48
    EWISE_SQRT = 49
    EWISE_RSQRT = 50
    EWISE_ABS = 51
    EWISE_NEG = 52
    EWISE_SIGN = 53
    EWISE_FLOOR = 54
    EWISE_CAST = 55
    EWISE_FILL = 56
    REDUCE_SUM = 57
    REDUCE_MEAN = 58
    REDUCE_MAX = 59
    REDUCE_MIN = 60
    REDUCE_ARGMAX = 61
    REDUCE_ARGMIN = 62
    REDUCE_CUMSUM = 63
    REDUCE_TOPK = 64
    POOL_MAX1D = 65
    POOL_MAX2D = 66
    POOL_MAX3D = 67
    POOL_AVG1D = 68
    POOL_AVG2D = 69
    POOL_AVG3D = 70
    POOL_ADAPTIVE_MAX = 71
    POOL_ADAPTIVE_AVG = 72
    VIEW = 73
    RESHAPE = 74
    PERMUTE = 75
    TRANSPOSE = 76
    CONTIGUOUS = 77
    EXPAND = 78
    SQUEEZE = 79
    SLICE = 80
    INDEX_SELECT = 81
    INDEX = 82
    SCATTER = 83
    MASKED_FILL = 84
    PAD = 85
    CAT = 86
    STACK = 87
    UNFOLD = 88
    EMBEDDING = 89
    EMBEDDING_BAG = 90
    COPY_ = 91
    CLONE = 92
    INTERPOLATE = 93
    GRID_SAMPLE = 94
    IM2COL = 95
    FUSED_ATTENTION = 96
    FUSED_LINEAR_ACT = 97
    FUSED_NORM_LINEAR = 98
    FUSED_SOFTMAX_DROP = 99
    LINALG_SVD = 100
    LINALG_CHOLESKY = 101
    LINALG_QR = 102
    LINALG_SOLVE = 103
    LINALG_EIGH = 104
    LINALG_NORM = 105
    LINALG_CROSS = 106
    CDIST = 107
    FFT = 108
    ASSOC_SCAN = 109
    SELECTIVE_SCAN = 110
    SSD_CHUNK = 111
    WKV_RECURRENCE = 112
    RETENTION = 113
    MLSTM_RECURRENCE = 114
    DEQUANT_GEMM = 115
    MOE_ROUTE_GEMM = 116
    PAGED_ATTENTION = 117
    FUSED_CROSS_ENTROPY = 118
    LINEAR_ATTN_CAUSAL = 119
    RAGGED_ATTN = 120
    GAUSSIAN_RASTERIZE = 121
    HASH_GRID_ENCODE = 122
    VOLUME_RENDER = 123
    SH_EVAL = 124
    FFT_CONV = 125
    MONARCH_MATMUL = 126
    SPMM_GNN = 127
    SDDMM_GNN = 128
    SINKHORN = 129
    COMM_ALLREDUCE = 130
    COMM_ALLGATHER = 131
    COMM_REDUCE_SCATTER = 132
    COMM_BROADCAST = 133
    COMM_ALL_TO_ALL = 134
    COMM_SEND = 135
    COMM_RECV = 136
    COMM_REDUCE = 137
    COMM_GATHER = 138
    COMM_SCATTER = 139
    IO_LOAD = 140
    IO_PREFETCH = 141
    IO_CHECKPOINT_SAVE = 142
    IO_CHECKPOINT_LOAD = 143
    RNG_UNIFORM = 144
    RNG_NORMAL = 145
    COMM_BARRIER = 146
    NUM_KERNELS = 147


TABLE_CAP = 256
"""The schema-hash -> CKernelId registration table holds at most 256 entries. Real code:
`CKernel.h`, `CKERNEL_TABLE_CAP`."""

CKERNEL_ENTRY = struct("CKernelEntry", [
    Member("schema_hash", hash64),
    Member("id", enum_of(CKernelId, u8)),
], size=16, align=8, chapter=12,
   doc="One registration: schema hash -> CKernelId (7 bytes of tail padding).")
