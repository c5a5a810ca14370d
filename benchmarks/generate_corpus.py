"""Generate a deterministic corpus of mixed Chinese/English technical Markdown notes.

    python benchmarks/generate_corpus.py OUT_DIR --notes 10000 --seed 1

Writes ``OUT_DIR/kb.yaml`` (``roots: [notes]``), the notes under ``OUT_DIR/notes/`` in
nested topic folders, and ``OUT_DIR/corpus.json`` last: the parameters and the link counts
the generator knows, so benchmarks and tests can tell a finished corpus from a half-written
one. The same ``--notes`` and ``--seed`` always give byte-identical files (stdlib only, one
``random.Random(seed)``, no clock, no set iteration).

One note always sits at ``notes/long/long-note-30k.md`` (about 30 KB) for UI benchmarks.
"""

from __future__ import annotations

import argparse
import bisect
import json
import posixpath
import random
import re
import shutil
import statistics
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR_VERSION = 1  # bump when the output changes: cached benchmark corpora are regenerated
MARKER_NAME = "corpus.json"
LONG_NOTE_PATH = "long/long-note-30k.md"
LONG_NOTE_BYTES = 30_000

# Note sizes are log-normal: median 5 KB, and sigma chosen so that ~1% exceed 25 KB.
MEDIAN_BYTES = 5_000
SIZE_SIGMA = 0.69
MIN_BYTES = 700
MAX_BYTES = 60_000
BROKEN_LINK_RATE = 0.02

# ---------------------------------------------------------------------------
# Vocabulary. Topic terms are the "core" words a folder's notes keep returning to;
# the global lists add general terms. Sampling is Zipf-like over a fixed order.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    folder: str
    tags: tuple[str, ...]
    en: tuple[str, ...]
    zh: tuple[str, ...]
    weight: float = 1.0


def _words(text: str, sep: str | None = None) -> tuple[str, ...]:
    """Word lists are typed as one string: easier to read and edit than a list literal."""
    return tuple(text.split(sep))


def _t(folder: str, tags: str, en: str, zh: str, weight: float = 1.0) -> Topic:
    return Topic(folder, _words(tags), _words(en, "|"), _words(zh), weight)


TOPICS: tuple[Topic, ...] = (
    _t(
        "gpu/perf",
        "gpu gpu/perf roofline",
        "GPU|roofline|memory bandwidth|HBM|arithmetic intensity|TFLOPS|tensor core|SM|occupancy"
        "|L2 cache|Nsight|profiler|GEMM|kernel",
        "显存带宽 计算密度 访存 瓶颈 占用率 吞吐 峰值算力 热点 性能分析 带宽",
        3.0,
    ),
    _t(
        "gpu/cuda",
        "gpu gpu/cuda cuda",
        "CUDA|kernel|warp|shared memory|register|stream|cudaMemcpyAsync|kernel launch|CUDA Graph"
        "|NVTX|pinned memory|thread block|bank conflict",
        "线程块 线程束 共享内存 寄存器 异步拷贝 锁页内存 设备内存 同步 流 内核",
        2.5,
    ),
    _t(
        "gpu/memory",
        "gpu gpu/memory memory",
        "HBM|caching allocator|OOM|memory fragmentation|empty_cache|unified memory|activation"
        "|peak memory|max_split_size_mb",
        "显存 显存占用 显存峰值 内存碎片 内存池 激活值 重计算 统一内存",
        2.0,
    ),
    _t(
        "distributed/fsdp",
        "distributed distributed/fsdp fsdp pytorch",
        "FSDP|FlatParameter|flatten|sharding|all-gather|reduce-scatter|state_dict|DTensor"
        "|DeviceMesh|ZeRO|prefetch|use_orig_params",
        "分布式 切分 参数 梯度 优化器状态 通信 计算与通信重叠 分片 显存",
        2.5,
    ),
    _t(
        "distributed/nccl",
        "distributed distributed/nccl nccl network",
        "NCCL|all-reduce|ring|tree|NVLink|InfiniBand|RDMA|RoCE|PCIe|process group|bucket",
        "通信 通信开销 拓扑 网卡 交换机 多机 多卡 节点 带宽 延迟",
        1.5,
    ),
    _t(
        "distributed/deepspeed",
        "distributed distributed/deepspeed deepspeed",
        "DeepSpeed|ZeRO|ZeRO-3|offload|Megatron|tensor parallel|pipeline parallel|micro-batch",
        "张量并行 流水线并行 数据并行 卸载 参数服务器 负载不均衡 梯度累积",
        1.2,
    ),
    _t(
        "llm/tokenizer",
        "llm llm/tokenizer nlp",
        "tokenizer|BPE|SentencePiece|vocab|byte-level|merges|special token|unigram|tiktoken",
        "分词器 词表 分词 编码 解码 中文分词 字节 切分",
        1.5,
    ),
    _t(
        "llm/inference",
        "llm llm/inference serving",
        "vLLM|KV cache|PagedAttention|prefill|decode|continuous batching|speculative decoding"
        "|TTFT|TensorRT-LLM|prefix caching",
        "推理 首字延迟 解码阶段 预填充阶段 前缀缓存 连续批处理 推测解码 吞吐量 尾延迟",
        2.5,
    ),
    _t(
        "llm/quantization",
        "llm llm/quantization quantization",
        "GPTQ|AWQ|SmoothQuant|int8|int4|fp8|bf16|calibration|per-channel|outlier",
        "量化 反量化 校准 精度损失 权重 激活 离群值 混合精度",
        2.0,
    ),
    _t(
        "llm/attention",
        "llm llm/attention transformer",
        "attention|FlashAttention|softmax|RoPE|MQA|GQA|sliding window|causal mask|tiling",
        "注意力 多头注意力 位置编码 上下文长度 长序列 分块 在线 softmax",
        1.8,
    ),
    _t(
        "llm/training",
        "llm llm/training training",
        "AdamW|learning rate|warmup|LoRA|QLoRA|SFT|DPO|RLHF|gradient checkpointing|loss spike",
        "训练 微调 预训练 学习率 收敛 损失函数 梯度爆炸 数据集 评估",
        1.8,
    ),
    _t(
        "compiler/triton",
        "compiler compiler/triton triton",
        "Triton|tl.load|autotune|block size|num_warps|torch.compile|Inductor|codegen",
        "编译器 算子 算子融合 自动调优 代码生成 分块",
        1.2,
    ),
    _t(
        "compiler/mlir",
        "compiler compiler/mlir mlir",
        "MLIR|LLVM|dialect|IR|lowering|pass|XLA|TVM|affine",
        "中间表示 图优化 编译 降级 静态图 动态图",
        0.8,
    ),
    _t(
        "db/redis",
        "db db/redis redis cache",
        "Redis|RDB|AOF|pipeline|Lua script|Sentinel|Redis Cluster|eviction|LRU|LFU|TTL"
        "|hot key|big key|pub/sub",
        "缓存 持久化 主从复制 哨兵 集群 过期策略 淘汰策略 热键 大键 缓存穿透 缓存雪崩",
        2.5,
    ),
    _t(
        "db/postgres",
        "db db/postgres sql",
        "PostgreSQL|MVCC|WAL|vacuum|B-tree|index scan|EXPLAIN ANALYZE|connection pool|pgbouncer",
        "事务 隔离级别 索引 锁 死锁 慢查询 执行计划 连接池",
        1.5,
    ),
    _t(
        "db/sqlite",
        "db db/sqlite sqlite search",
        "SQLite|FTS5|WAL|BM25|virtual table|PRAGMA|journal_mode|trigram",
        "全文检索 倒排索引 索引 事务 增量更新 全量重建",
        1.2,
    ),
    _t(
        "db/storage-engine",
        "db db/storage storage",
        "LSM-tree|RocksDB|compaction|memtable|SSTable|bloom filter|write amplification",
        "存储引擎 写放大 布隆过滤器 跳表 合并 压缩",
        0.9,
    ),
    _t(
        "search/fulltext",
        "search search/fulltext",
        "inverted index|posting list|BM25|tf-idf|jieba|n-gram|tokenizer|stemming|snippet",
        "倒排索引 全文检索 分词 召回 排序 相关性 索引 中文分词",
        1.4,
    ),
    _t(
        "search/vector",
        "search search/vector embedding",
        "HNSW|FAISS|ANN|embedding|recall|rerank|cosine similarity|IVF|product quantization",
        "向量检索 近似最近邻 召回 排序 相关性 向量 量化",
        1.2,
    ),
    _t(
        "infra/k8s",
        "infra infra/k8s kubernetes",
        "Kubernetes|Pod|Deployment|Service|Ingress|HPA|etcd|node affinity|DaemonSet|Helm",
        "容器 编排 弹性伸缩 服务发现 部署 灰度发布 回滚 调度",
        1.6,
    ),
    _t(
        "infra/docker",
        "infra infra/docker docker",
        "Docker|container|image|layer|cgroup|namespace|overlayfs|multi-stage build",
        "容器 镜像 分层 资源隔离 构建 缓存",
        1.0,
    ),
    _t(
        "infra/observability",
        "infra infra/observability monitoring",
        "Prometheus|Grafana|OpenTelemetry|trace|span|p99|SLO|alert|exemplar",
        "监控 告警 日志 链路追踪 可观测性 指标 尾延迟 长尾",
        1.0,
    ),
    _t(
        "os/linux",
        "os os/linux linux",
        "Linux|syscall|page cache|mmap|io_uring|epoll|NUMA|TLB|huge page|perf|eBPF",
        "系统调用 页缓存 零拷贝 页表 内存映射 中断 上下文切换",
        1.8,
    ),
    _t(
        "os/scheduler",
        "os os/scheduler",
        "CFS|context switch|run queue|cgroup|CPU affinity|preemption|nice",
        "调度 调度器 进程 线程 抢占 时间片 负载均衡",
        0.8,
    ),
    _t(
        "os/filesystem",
        "os os/filesystem storage",
        "ext4|btrfs|fsync|inode|journal|O_DIRECT|writeback|NVMe",
        "文件系统 日志 持久化 元数据 写回 刷盘",
        0.8,
    ),
    _t(
        "network/protocols",
        "network network/protocols",
        "TCP|UDP|QUIC|HTTP/2|gRPC|protobuf|TLS|DNS|congestion control|BBR",
        "网络 拥塞控制 握手 重传 序列化 反序列化 长连接",
        1.2,
    ),
    _t(
        "lang/python",
        "lang lang/python python",
        "Python|GIL|asyncio|multiprocessing|dataclass|type hints|mypy|pytest|ruff|uv|venv"
        "|generator|decorator",
        "协程 异步 事件循环 类型系统 类型推断 单元测试 装饰器 生成器 垃圾回收",
        2.5,
    ),
    _t(
        "lang/cpp",
        "lang lang/cpp c++",
        "C++|RAII|template|move semantics|unique_ptr|shared_ptr|constexpr|CMake|memory model"
        "|std::atomic|UB",
        "模板 所有权 内存模型 原子操作 未定义行为 野指针 段错误 内存布局 对齐",
        2.0,
    ),
    _t(
        "lang/rust",
        "lang lang/rust rust",
        "Rust|ownership|borrow checker|lifetime|trait|tokio|async|Send|Sync|unsafe",
        "所有权 借用 生命周期 泛型 并发 内存安全",
        1.2,
    ),
    _t(
        "lang/go",
        "lang lang/go go",
        "Go|goroutine|channel|GC|pprof|context|sync.Pool|escape analysis",
        "协程 垃圾回收 逃逸分析 并发 调度",
        0.9,
    ),
    _t(
        "concurrency",
        "concurrency",
        "lock-free|mutex|atomic|false sharing|cache line|memory order|CAS|ABA problem",
        "并发 锁 无锁队列 伪共享 缓存行 原子操作 死锁 内存屏障",
        1.2,
    ),
    _t(
        "web/frontend",
        "web web/frontend",
        "React|TypeScript|Vite|WebSocket|SSE|hydration|bundle size|CDN",
        "前端 渲染 打包 首屏 缓存",
        0.8,
    ),
    _t(
        "tools/notes",
        "tools tools/notes pkm",
        "Markdown|Obsidian|wikilink|YAML|front matter|backlink|Zettelkasten|Hugo",
        "笔记 知识库 双向链接 标签 搜索 元数据 卡片",
        1.0,
    ),
    _t(
        "papers",
        "papers reading",
        "paper|arXiv|ablation|baseline|benchmark|scaling law|MoE|transformer",
        "论文 实验 消融 基线 结论 方法 复现",
        1.5,
    ),
    _t(
        "papers/systems",
        "papers papers/systems",
        "OSDI|SOSP|MLSys|Megatron|PagedAttention|ZeRO|Pathways|Orca",
        "论文 系统 调度 显存 吞吐 分布式",
        0.8,
    ),
    _t(
        "journal",
        "journal daily",
        "TODO|retro|benchmark|regression|on-call|postmortem|code review",
        "周报 复盘 踩坑 问题 排查 计划 总结",
        1.8,
    ),
    _t(
        "journal/2024",
        "journal daily",
        "TODO|retro|OOM|incident|hotfix|regression|bisect",
        "复盘 排查 故障 回滚 总结 计划",
        1.0,
    ),
    _t(
        "interview",
        "interview career",
        "LRU|B-tree|consistent hashing|CAP|Raft|system design|rate limiter",
        "面试 算法 数据结构 复杂度 一致性 高可用 限流",
        1.0,
    ),
    _t("inbox", "inbox todo", "TODO|idea|link|draft|snippet", "想法 待整理 草稿 摘录 灵感", 1.2),
)

EXTRA_EN = (
    "CPU|FLOPS|latency|throughput|batch size|sequence length|context length|prompt|logits"
    "|embedding|LayerNorm|RMSNorm|MoE|transformer|PyTorch|JAX|ONNX|TensorRT|cuBLAS|cuDNN"
    "|CUTLASS|matmul|conv|flame graph|benchmark|QPS|SLA|segfault|deadlock|race condition"
    "|regression|hot path|cold start|warm-up|dataset|dataloader|shuffle|checkpoint"
    "|mixed precision|fp16|autograd|backward|optimizer|gradient|operator fusion|graph"
    "|Bazel|nginx|Envoy|load balancer|Kafka|partition|consumer group|offset|exactly-once"
    "|Raft|etcd|consistent hashing|CAP|idempotency|rate limiter|JSON|CI|GitHub Actions"
    "|Makefile|SIMD|AVX-512|branch prediction|prefetcher|compiler|inline|LTO|PGO"
    "|serialization|zero-copy|ring buffer|backpressure|thundering herd|circuit breaker"
    "|sidecar|service mesh|feature flag|canary|blue-green|rollback|schema migration"
    "|WebAssembly|JIT|bytecode|interpreter|reference counting|arena allocator|jemalloc"
    "|tcmalloc|glibc|ABI|FFI|pybind11|Cython|numpy|pandas|Arrow|Parquet|DuckDB|Spark"
    "|Ray|Airflow|S3|object storage|erasure coding|RAID|SSD|NVMe|DMA|interrupt|softirq"
    "|cgroup v2|seccomp|SELinux|OAuth|JWT|CORS|CSRF|XSS|rate limit|Bloom filter"
    "|HyperLogLog|Count-Min Sketch|skip list|trie|heap|hash map|red-black tree"
)
EXTRA_ZH = (
    "性能 延迟 吞吐 瓶颈 并行 流水线 梯度 参数 权重 激活 推理 训练 调度 热点 采样 基准测试 回归 "
    "索引 排序 事务 锁 并发 线程 进程 网络 负载均衡 配置 部署 容错 高可用 一致性 共识 副本 "
    "故障恢复 检查点 快照 压缩 解压 编码 哈希 数据结构 算法 复杂度 引用计数 内存泄漏 "
    "单元测试 集成测试 性能测试 持续集成 代码审查 重构 技术债 增量更新 冷启动 预热 扩展性 "
    "可维护性 稳定性 峰值内存 内存占用 抖动 数据加载 预处理 后处理 指标 过拟合 正则化 归一化 "
    "残差连接 前馈网络 专家混合 稀疏 稠密 矩阵乘法 卷积 规约 广播 转置 双缓冲 预取 主机内存 "
    "多卡 多机 拓扑 异步 缓存命中率 冷热分离 读写分离 限流 熔断 降级 幂等 消息队列 重试 超时 "
    "背压 批量写入 随机读 顺序写 尾部延迟 资源利用率 成本 容量规划 压测 火焰图 内联 向量化 "
    "分支预测 指令级并行 数据局部性 工作集 内存墙 算力 能耗 散热 功耗墙"
)
ZH_VERBS = _words(
    "优化 减少 降低 提升 拆分 合并 缓存 复用 压缩 展开 重排 预取 同步 广播 切分 量化 融合 调度 "
    "卸载 映射 拷贝 隔离 绕过 放大 掩盖 隐藏 定位 排查 验证 复现 抵消 摊薄"
)
EN_VERBS = _words("flatten shard gather profile benchmark tune debug inline pin prefetch fuse")
ZH_ADJ = _words("高效 稳定 复杂 昂贵 明显 关键 敏感 友好 脆弱 廉价 可控 不稳定 反直觉")
NUMBERS = _words("2 4 8 16 32 64 128 256 512 1024 3 5 10 12 20 40 80 100 1.5 2.5 0.3")
PERCENTS = _words("5 10 12 15 20 25 30 35 40 50 60 70 80 90")
MODELS = _words("Qwen2-7B|Llama-3-8B|Mistral-7B|DeepSeek-V2-Lite|GLM-4-9B|Yi-6B|Baichuan2-7B", "|")
CATEGORIES = _words("学习笔记|工程实践|论文阅读|Troubleshooting|Reading|Cheatsheet|复盘", "|")
SERIES = _words(
    "CUDA 性能优化系列|大模型推理笔记|Redis 深入浅出|分布式训练实战|Linux 内核拾遗"
    "|Rust 学习路线|检索系统搭建|Triton kernel 手记",
    "|",
)
GLOBAL_TAGS = _words("todo draft reading perf 性能 优化 踩坑 源码 面试 分布式 量化 缓存 cheatsheet")

# Templates: {E} English term, {Z} Chinese noun, {V} Chinese verb, {W} English verb,
# {A} adjective, {N} number, {P} percentage, {M} model name. Chinese templates glue English
# terms directly to Han characters; a per-note style may add spaces later.
ZH_TEMPLATES = (
    "{Z}是{E}的瓶颈",
    "{E} 的 {E} 把{Z} {W} 成一个 {E}",
    "在{Z}场景下，{E}的{Z}通常比{E}更{A}",
    "我们用{E}来{V}{Z}，{Z}下降了{P}%",
    "如果{Z}不够，就需要考虑{E}或者{Z}",
    "{E}默认会{V}{Z}，这一点在新版本里有变化",
    "根据{E}模型，{Z}受限于{Z}而不是{Z}",
    "注意：{E}和{E}的{Z}不一样",
    "实测{E}在{N}张卡上的{Z}大约是{N} GB/s",
    "{Z}和{Z}之间需要权衡",
    "这里的关键是{Z}，而不是{E}本身",
    "{E}（{Z}）可以显著{V}{Z}",
    "简单来说，{E}就是把{Z}{V}到{Z}",
    "{Z}的问题往往出在{E}上",
    "先用{E}看一下{Z}，再决定要不要{V}{Z}",
    "{M}在{E}下的{Z}比预期{A}",
    "把batch size从{N}调到{N}之后，{Z}提升了{P}%",
    "{E}会{V}{Z}，但代价是{Z}变得{A}",
    "很多人以为{Z}是{E}的问题，其实是{Z}",
    "{E}的文档里没写清楚{Z}的细节",
    "对{Z}来说，{E}几乎是必选项",
    "{Z}过高时，{E}会触发{E}",
    "这一步的{Z}主要花在{E}和{Z}上",
    "{E}和{E}组合使用时要小心{Z}",
    "为了{V}{Z}，我们引入了{E}",
    "{Z}与{Z}的比值决定了是否{A}",
    "线上{Z}抖动，最后定位到是{E}的{Z}",
    "{E}本质上是一种{Z}",
    "从{Z}的角度看，{E}并不{A}",
    "{Z}大概占了总时间的{P}%",
    "可以用{E}做{Z}，再用{E}{V}结果",
    "在{M}上复现了这个{Z}，{E}的表现{A}",
)
EN_TEMPLATES = (
    "{E} is bound by {E}, not by {E}",
    "When {E} is enabled, {E} can cut {E} overhead by {P}%",
    "We measured {E} at {N} GB/s on a single node",
    "In practice {E} and {E} interact badly under {E}",
    "See the {E} docs for the details of {E}",
    "{E} uses {E} to avoid the cost of {E}",
    "The main trade-off is between {E} and {E}",
    "Profiling showed that {E} dominates the {E} path",
    "Switching from {E} to {E} reduced latency by {P}%",
    "Most of the time goes into {E}, so {W} it first",
    "{E} only helps when {E} is the bottleneck",
    "A common mistake is to {W} {E} before checking {E}",
    "With {M}, {E} behaves differently from {E}",
    "The {E} path is fine, but {E} regresses at batch size {N}",
    "Keep {E} and {E} on the same device to avoid {E}",
    "{E} trades memory for speed, which matters for {E}",
)
BULLET_TEMPLATES = (
    "{Z}：{E} 的{Z}",
    "{E}：{Z}，{Z}",
    "{V}{Z}（{E}）",
    "`{E}` 相关的{Z}",
    "{E} vs {E}",
    "{Z}大约{P}%",
    "check {E} before {E}",
    "{E}: {E} + {E}",
)
HEADING_TEMPLATES = (
    "{Z}",
    "{E} 与{Z}",
    "{Z}分析",
    "Why {E} matters",
    "{E} {Z}",
    "{Z}和{Z}",
    "{E} 的{Z}",
    "{Z}优化",
    "How {E} works",
    "{E} internals",
    "问题{Z}",
    "实验{Z}",
    "{Z}小结",
)
FIXED_HEADINGS = ("背景", "结论", "参考", "TODO", "小结", "踩坑记录", "References", "Summary")
TITLE_TEMPLATES = (
    "{E} 的{Z}笔记",
    "{Z}：{E} 与 {E}",
    "{E}{Z}踩坑记录",
    "关于{Z}的一些思考",
    "{E} vs {E}：{Z}对比",
    "{Z}优化实践（{E}）",
    "Understanding {E}",
    "{E} internals",
    "Notes on {E} and {E}",
    "{E} 源码阅读：{Z}",
    "{Z}入门",
    "如何用 {E} {V}{Z}",
    "{E} {Z} cheatsheet",
    "{Z}与{Z}",
    "Debugging {E} in {E}",
    "{E} 的 {E} 是怎么{V}{Z}的",
)

# Code snippets: @NAME@, @CNAME@, @N@, @SMALLN@, @ZH@ (a Chinese comment phrase), @MODEL@.
# Bash `[[ -f x ]]`, C++ `[[nodiscard]]` and `#include` lines are deliberate look-alikes of
# wikilinks, tags and headings that a parser must leave alone inside code.
CODE_SNIPPETS: tuple[tuple[str, str], ...] = (
    (
        "python",
        """import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

# @ZH@
def @NAME@(model, batch_size=@N@):
    # wrap each transformer block so every FlatParameter stays small
    model = FSDP(model, use_orig_params=True)
    x = torch.randn(batch_size, @N@, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = model(x)
    return y.float().mean()
""",
    ),
    (
        "python",
        """import redis

r = redis.Redis(host="localhost", port=6379)
# @ZH@
pipe = r.pipeline(transaction=False)
for i in range(@N@):
    pipe.set(f"key:{i}", i, ex=@N@)  # TTL in seconds
pipe.execute()
""",
    ),
    (
        "python",
        """# roofline: arithmetic intensity = flops / bytes moved
def @NAME@(m: int, n: int, k: int, seconds: float) -> tuple[float, float]:
    flops = 2 * m * n * k
    bytes_moved = 2 * (m * k + k * n + m * n)
    # @ZH@
    return flops / seconds / 1e12, flops / bytes_moved
""",
    ),
    (
        "python",
        """from transformers import AutoTokenizer

tok = AutoTokenizer.from_pretrained("@MODEL@")
# 中文会被切成很多 byte-level token
ids = tok("显存带宽是GPU的瓶颈")["input_ids"]
print(len(ids), ids[:@N@])
""",
    ),
    (
        "python",
        """import asyncio

# @ZH@
async def @NAME@(urls: list[str], limit: int = @N@) -> list[bytes]:
    sem = asyncio.Semaphore(limit)

    async def one(url: str) -> bytes:
        async with sem:  # keep at most `limit` requests in flight
            return await fetch(url)

    return await asyncio.gather(*(one(u) for u in urls))
""",
    ),
    (
        "cpp",
        """#include <cuda_runtime.h>
#include <cstdio>

// @ZH@
__global__ void @NAME@(const float* __restrict__ x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f;
}

int main() {
    const int n = 1 << @SMALLN@;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    @NAME@<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaDeviceSynchronize();
    printf("done\\n");
    return 0;
}
""",
    ),
    (
        "c++",
        """#pragma once
#include <atomic>
#include <vector>

// @ZH@
struct alignas(64) PaddedCounter {
    std::atomic<long> value{0};
};

[[nodiscard]] long @NAME@(std::vector<PaddedCounter>& cs) {
    long total = 0;
    for (auto& c : cs) total += c.value.load(std::memory_order_relaxed);
    return total;
}
""",
    ),
    (
        "cpp",
        """#include <memory>
#define CHECK(x) do { if (!(x)) std::abort(); } while (0)

template <typename T>
class @CNAME@ {
 public:
  explicit @CNAME@(size_t n) : buf_(std::make_unique<T[]>(n)), n_(n) {}
  T& operator[](size_t i) { CHECK(i < n_); return buf_[i]; }  // @ZH@
 private:
  std::unique_ptr<T[]> buf_;
  size_t n_;
};
""",
    ),
    (
        "bash",
        """#!/usr/bin/env bash
set -euo pipefail
# @ZH@
CFG=${CFG:-config.yaml}
if [[ -f "$CFG" ]]; then
  echo "using $CFG"
fi
# pin to NUMA node 0
numactl --cpunodebind=0 --membind=0 python train.py --batch-size @N@
""",
    ),
    (
        "bash",
        """# profile the kernel with Nsight Systems
nsys profile -o report --trace=cuda,nvtx python bench.py
# 看一下 SM 占用率
ncu --set full -k @NAME@ ./a.out
""",
    ),
    (
        "bash",
        """# Redis 内存分析
redis-cli --bigkeys
redis-cli INFO memory | grep used_memory_human
redis-cli CONFIG SET maxmemory-policy allkeys-lfu  # @ZH@
""",
    ),
    (
        "bash",
        """torchrun --nproc_per_node=8 --nnodes=@SMALLN@ train.py \\
  --fsdp full_shard --bf16   # ZeRO-3 equivalent
export NCCL_DEBUG=INFO  # print ring/tree topology
# @ZH@
""",
    ),
    (
        "sql",
        """-- 检查 FTS5 索引
CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, tokenize='unicode61');
SELECT rowid, bm25(notes_fts) FROM notes_fts WHERE notes_fts MATCH '显存 AND GPU' LIMIT @N@;
""",
    ),
    (
        "rust",
        """use std::sync::Arc;

// @ZH@
fn @NAME@(v: Arc<Vec<u8>>) -> usize {
    v.iter().filter(|b| **b == b'#').count()
}
""",
    ),
    (
        "yaml",
        """# @ZH@
train:
  batch_size: @N@
  precision: bf16
  fsdp: {sharding: FULL_SHARD, use_orig_params: true}
""",
    ),
)
CODE_NAMES = _words("run_step bench fused_add scale_kernel load_shard sum_counters fetch_all probe")
CODE_CLASSES = _words("Buffer RingBuffer Arena Slab Pool")
EXTERNAL_URLS = (
    "https://pytorch.org/docs/stable/fsdp.html#module-torch.distributed.fsdp",
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory",
    "https://redis.io/docs/latest/develop/reference/eviction/",
    "https://www.sqlite.org/fts5.html#the_bm25_function",
    "https://arxiv.org/abs/2205.14135",
    "https://github.com/vllm-project/vllm/issues/1234",
)
SLOT_RE = re.compile(r"\{([A-Z])\}")
CJK = "\u4e00-\u9fff"
_SPACE_AFTER_CJK = re.compile(rf"([{CJK}])([A-Za-z0-9`])")
_SPACE_BEFORE_CJK = re.compile(rf"([A-Za-z0-9`%])([{CJK}])")


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def slugify(text: str) -> str:
    """Heading anchor the GitHub way (what kb.text.slugify does): lower, drop punctuation."""
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def file_slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class ZipfSampler:
    """Draws words with weights 1/(rank+2.7): a few very common terms and a long tail.

    ``head`` words take the top ranks in the order given; the rest follow in a fixed shuffle
    (independent of the corpus seed, so every corpus has the same frequency ranking).
    """

    def __init__(
        self, words: list[str], order_seed: int | None = None, head: tuple[str, ...] = ()
    ) -> None:
        tail = [w for w in words if w not in head]
        if order_seed is not None:
            random.Random(order_seed).shuffle(tail)
        self.words = [w for w in head if w in words] + tail
        weights = [1.0 / (rank + 2.7) for rank in range(len(self.words))]
        self.cumulative = _cumulative(weights)

    def draw(self, rng_random: float) -> str:
        index = bisect.bisect(self.cumulative, rng_random * self.cumulative[-1])
        return self.words[min(index, len(self.words) - 1)]


def _cumulative(weights: list[float]) -> list[float]:
    total, out = 0.0, []
    for weight in weights:
        total += weight
        out.append(total)
    return out


def _parse_template(template: str) -> tuple[tuple[str, str], ...]:
    """Split "a{E}b{Z}" into ((a, E), (b, Z), ("", "")) once, for fast filling."""
    parts: list[tuple[str, str]] = []
    position = 0
    for match in SLOT_RE.finditer(template):
        parts.append((template[position : match.start()], match.group(1)))
        position = match.end()
    parts.append((template[position:], ""))
    return tuple(parts)


ALL_EN = _dedupe([t for topic in TOPICS for t in topic.en] + EXTRA_EN.split("|"))
ALL_ZH = _dedupe([t for topic in TOPICS for t in topic.zh] + EXTRA_ZH.split())
# The most frequent terms of a GPU/LLM/backend engineer's notes, most common first.
EN_HEAD = _words(
    "GPU|Python|CUDA|kernel|latency|throughput|Redis|PyTorch|memory bandwidth|benchmark"
    "|Linux|attention|FSDP|tokenizer|KV cache|C++|batch size|Kubernetes|NCCL|roofline",
    "|",
)
ZH_HEAD = _words("显存 性能 缓存 带宽 延迟 吞吐 分布式 算子 量化 瓶颈 推理 训练 索引 并发 内存占用")
EN_SAMPLER = ZipfSampler(ALL_EN, order_seed=101, head=EN_HEAD)
ZH_SAMPLER = ZipfSampler(ALL_ZH, order_seed=202, head=ZH_HEAD)
ZH_PARSED = tuple(_parse_template(t) for t in ZH_TEMPLATES)
EN_PARSED = tuple(_parse_template(t) for t in EN_TEMPLATES)
BULLET_PARSED = tuple(_parse_template(t) for t in BULLET_TEMPLATES)
HEADING_PARSED = tuple(_parse_template(t) for t in HEADING_TEMPLATES)
TITLE_PARSED = tuple(_parse_template(t) for t in TITLE_TEMPLATES)
# Headings are link targets: keep terms whose slug is unambiguous (letters, digits, spaces).
CLEAN_EN = tuple(t for t in ALL_EN if re.fullmatch(r"[A-Za-z0-9 ]+", t))

# ---------------------------------------------------------------------------
# Corpus plan: every note's place, title and headings are decided before any body is
# written, so links can point at any note and at its real heading anchors.
# ---------------------------------------------------------------------------


@dataclass
class NotePlan:
    index: int
    topic: Topic
    rel_path: str  # POSIX, relative to notes/
    stem: str
    title: str
    target_bytes: int
    headings: list[tuple[int, str, str]]  # (level, text, slug)
    english: bool  # mostly English prose


@dataclass
class LinkStats:
    markdown: int = 0
    wikilink: int = 0
    anchor: int = 0
    external: int = 0
    broken_target: int = 0
    broken_anchor: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)

    def add(self, other: LinkStats) -> None:
        for name, value in other.__dict__.items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class CorpusStats:
    bytes: int = 0
    links: LinkStats = field(default_factory=LinkStats)


class Writer:
    """Fills text for one corpus; all randomness flows from one Random(seed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.topic: Topic = TOPICS[0]
        self.spaced = False

    # -- words ---------------------------------------------------------------

    def en(self) -> str:
        if self.rng.random() < 0.45:
            return self.rng.choice(self.topic.en)
        return EN_SAMPLER.draw(self.rng.random())

    def zh(self) -> str:
        if self.rng.random() < 0.45:
            return self.rng.choice(self.topic.zh)
        return ZH_SAMPLER.draw(self.rng.random())

    def slot(self, name: str) -> str:
        rng = self.rng
        if name == "E":
            return self.en()
        if name == "Z":
            return self.zh()
        if name == "V":
            return rng.choice(ZH_VERBS)
        if name == "W":
            return rng.choice(EN_VERBS)
        if name == "A":
            return rng.choice(ZH_ADJ)
        if name == "N":
            return rng.choice(NUMBERS)
        if name == "P":
            return rng.choice(PERCENTS)
        return rng.choice(MODELS)

    def fill(self, parsed: tuple[tuple[str, str], ...], used: list[str] | None = None) -> str:
        out = []
        for literal, slot in parsed:
            out.append(literal)
            if slot:
                word = self.slot(slot)
                if used is not None:
                    used.append(slot + word)
                out.append(word)
        return "".join(out)

    def pangu(self, text: str) -> str:
        """Some writers put spaces between Han characters and Latin words; some don't."""
        if not self.spaced:
            return text
        return _SPACE_BEFORE_CJK.sub(r"\1 \2", _SPACE_AFTER_CJK.sub(r"\1 \2", text))

    # -- plan ----------------------------------------------------------------

    def plan(self, notes: int) -> list[NotePlan]:
        topic_weights = _cumulative([t.weight for t in TOPICS])
        plans = [self.long_note_plan()]
        used_stems = {plans[0].stem: 1}
        for index in range(1, notes):
            pick = bisect.bisect(topic_weights, self.rng.random() * topic_weights[-1])
            self.topic = TOPICS[min(pick, len(TOPICS) - 1)]
            plans.append(self.note_plan(index, used_stems))
        return plans

    def long_note_plan(self) -> NotePlan:
        self.topic = TOPICS[0]
        title = "GPU 性能优化长文：从 roofline 到 FSDP 的显存带宽分析"
        headings = self.headings_for(LONG_NOTE_BYTES)
        folder, name = posixpath.split(LONG_NOTE_PATH)
        return NotePlan(
            0,
            Topic(folder, ("gpu/perf", "long"), self.topic.en, self.topic.zh),
            LONG_NOTE_PATH,
            posixpath.splitext(name)[0],
            title,
            LONG_NOTE_BYTES,
            headings,
            english=False,
        )

    def note_plan(self, index: int, used_stems: dict[str, int]) -> NotePlan:
        used: list[str] = []
        title = self.fill(self.rng.choice(TITLE_PARSED), used)
        stem = self.unique_stem(self.stem_from(used), used_stems)
        size = self.rng.lognormvariate(0.0, SIZE_SIGMA) * MEDIAN_BYTES
        target = int(min(MAX_BYTES, max(MIN_BYTES, size)))
        return NotePlan(
            index,
            self.topic,
            f"{self.topic.folder}/{stem}.md",
            stem,
            title,
            target,
            self.headings_for(target),
            english=self.rng.random() < 0.1,
        )

    def stem_from(self, used: list[str]) -> str:
        english = _dedupe([file_slug(w[1:]) for w in used if w[0] == "E" and file_slug(w[1:])])
        chinese = [w[1:] for w in used if w[0] == "Z"]
        # Chinese file names, as real note folders have: every title without an English term
        # and some others, about a quarter of the notes.
        if chinese and (not english or self.rng.random() < 0.15):
            return "".join(chinese)[:16]
        suffix = self.rng.choice(("", "", "notes", "tips", "deep-dive", "faq"))
        return "-".join([*english[:3], suffix] if suffix else english[:3])

    @staticmethod
    def unique_stem(stem: str, used_stems: dict[str, int]) -> str:
        # Stems stay unique across folders so every [[stem]] names exactly one note.
        count = used_stems.get(stem, 0) + 1
        used_stems[stem] = count
        return stem if count == 1 else f"{stem}-{count}"

    def headings_for(self, target: int) -> list[tuple[int, str, str]]:
        sections = max(2, target // 1300)
        texts: list[tuple[int, str]] = []
        seen: set[str] = set()
        for number in range(sections):
            level = 3 if number and self.rng.random() < 0.3 else 2
            text = self.heading_text(number, sections)
            slug = slugify(text)
            if slug in seen:
                text = f"{text} {number + 1}"
            seen.add(slugify(text))
            texts.append((level, text))
        return [(level, text, slugify(text)) for level, text in texts]

    def heading_text(self, number: int, sections: int) -> str:
        if number == 0 and self.rng.random() < 0.5:
            return "背景"
        if number == sections - 1 and self.rng.random() < 0.5:
            return self.rng.choice(FIXED_HEADINGS[1:])
        parsed = self.rng.choice(HEADING_PARSED)
        out = []
        for literal, slot in parsed:
            out.append(literal)
            if slot == "E":
                pool = [t for t in self.topic.en if t in CLEAN_EN] or list(CLEAN_EN)
                out.append(self.rng.choice(pool))
            elif slot:
                out.append(self.zh())
        return "".join(out)


class NoteWriter:
    """Writes one note's text to about its planned size."""

    def __init__(
        self,
        writer: Writer,
        plans: list[NotePlan],
        by_topic: dict[str, list[int]],
        hubs: ZipfSampler,
        stats: LinkStats,
    ) -> None:
        self.w = writer
        self.rng = writer.rng
        self.plans = plans
        self.by_topic = by_topic
        self.hubs = hubs
        self.stats = stats
        # Links of the block being written: counted only if the block is kept.
        self.pending = LinkStats()
        self.note: NotePlan = plans[0]

    def render(self, note: NotePlan) -> str:
        self.note = note
        self.w.topic = note.topic
        self.w.spaced = self.rng.random() < 0.5
        parts = [self.front_matter()]
        slugs = {slug for _level, _text, slug in note.headings}
        # An H1 whose anchor equals a section's would shift that section's anchor to "-1".
        if self.rng.random() < 0.3 and slugify(note.title) not in slugs:
            parts.append(f"# {note.title}\n")
        parts.append(self.paragraph())
        self.keep_pending_links()
        size = sum(len(p.encode()) for p in parts)
        budget = max(300, (note.target_bytes - size) // len(note.headings))
        for level, text, _slug in note.headings:
            section = self.section(level, text, budget)
            parts.append(section)
        if self.rng.random() < 0.25:
            parts.append(" ".join(f"#{t}" for t in self.inline_tags(2)) + "\n")
        return "\n".join(parts)

    # -- front matter --------------------------------------------------------

    def front_matter(self) -> str:
        rng, note = self.rng, self.note
        lines = ["---", f"title: {yaml_scalar(note.title)}", f"date: {self.date()}"]
        tags = self.note_tags()
        if rng.random() < 0.6:
            lines.append(f"tags: [{', '.join(tags)}]")
        else:
            lines += ["tags:", *(f"  - {t}" for t in tags)]
        if rng.random() < 0.08:
            lines.append(f"series: {rng.choice(SERIES)}")
        if rng.random() < 0.3:
            categories = _dedupe([rng.choice(CATEGORIES) for _ in range(rng.randint(1, 2))])
            lines.append(f"categories: [{', '.join(categories)}]")
        if rng.random() < 0.1:
            aliases = [f"{self.w.zh()}笔记", file_slug(self.w.en()) or "alias"]
            lines.append(f"aliases: [{', '.join(aliases)}]")
        if rng.random() < 0.02:
            lines.append("draft: true")
        lines.append("---")
        return "\n".join(lines) + "\n"

    def date(self) -> str:
        rng = self.rng
        year, month, day = rng.randint(2019, 2025), rng.randint(1, 12), rng.randint(1, 28)
        roll = rng.random()
        if roll < 0.8:
            return f"{year}-{month:02d}-{day:02d}"
        if roll < 0.95:
            hour, minute = rng.randint(0, 23), rng.randint(0, 59)
            return f"{year}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:00"
        return f'"{year}/{month:02d}/{day:02d}"'

    def note_tags(self) -> list[str]:
        rng, topic = self.rng, self.note.topic
        tags = [topic.tags[0]]
        tags += rng.sample(topic.tags[1:], k=min(len(topic.tags) - 1, rng.randint(0, 2)))
        if rng.random() < 0.4:
            tags.append(rng.choice(GLOBAL_TAGS))
        return _dedupe(tags)

    def inline_tags(self, count: int) -> list[str]:
        pool = [*self.note.topic.tags, *GLOBAL_TAGS]
        return _dedupe([self.rng.choice(pool) for _ in range(count)])

    # -- body ----------------------------------------------------------------

    def section(self, level: int, heading: str, budget: int) -> str:
        blocks = [f"{'#' * level} {heading}\n"]
        size = len(blocks[0].encode())
        while True:
            block = self.block()
            block_size = len(block.encode())
            # Stop at the block boundary nearest the budget, so sizes are not biased upwards.
            if len(blocks) > 1 and size + block_size / 2 > budget:
                self.pending = LinkStats()
                return "\n".join(blocks)
            self.keep_pending_links()
            blocks.append(block)
            size += block_size

    def keep_pending_links(self) -> None:
        self.stats.add(self.pending)
        self.pending = LinkStats()

    def block(self) -> str:
        roll = self.rng.random()
        if roll < 0.58:
            return self.paragraph()
        if roll < 0.76:
            return self.bullets()
        if roll < 0.86:
            return self.code_block()
        if roll < 0.91:
            return self.quote()
        if roll < 0.94:
            return self.table()
        return self.tasks()

    def paragraph(self) -> str:
        english = self.note.english or self.rng.random() < 0.2
        count = self.rng.randint(2, 6)
        if english:
            sentences = [_capitalise(self.sentence(EN_PARSED)) + "." for _ in range(count)]
            text = " ".join(sentences)
        else:
            sentences = [self.sentence(ZH_PARSED) + "。" for _ in range(count)]
            text = self.w.pangu("".join(sentences))
        roll = self.rng.random()
        if roll < 0.35:
            text += self.link_sentence(english)
        elif roll < 0.40:
            url = self.rng.choice(EXTERNAL_URLS)
            text += f" 参考 <{url}>" if self.rng.random() < 0.5 else f" 参考[官方文档]({url})"
            self.pending.external += 1
        if self.rng.random() < 0.07:
            text += " " + " ".join(f"#{t}" for t in self.inline_tags(self.rng.randint(1, 2)))
        elif self.rng.random() < 0.02:
            text += " 相关 issue #1234，C# 里也有类似问题。"  # '#' that are not tags
        return text + "\n"

    def sentence(self, templates: tuple[tuple[tuple[str, str], ...], ...]) -> str:
        return self.w.fill(self.rng.choice(templates))

    def bullet_item(self) -> str:
        return self.w.pangu(self.sentence(BULLET_PARSED))

    def bullets(self) -> str:
        marker = self.rng.choice(("-", "-", "*", "1."))
        lines = []
        for _ in range(self.rng.randint(3, 7)):
            item = self.bullet_item()
            if self.rng.random() < 0.15:
                item += "，" + self.link()
            lines.append(f"{marker} {item}")
            if self.rng.random() < 0.1:
                lines.append(f"{' ' * (len(marker) + 1)}- {self.bullet_item()}")
        return "\n".join(lines) + "\n"

    def tasks(self) -> str:
        lines = [
            f"- [{self.rng.choice(' x')}] {self.bullet_item()}"
            for _ in range(self.rng.randint(2, 5))
        ]
        return "\n".join(lines) + "\n"

    def quote(self) -> str:
        text = self.w.pangu(self.sentence(ZH_PARSED))
        return f"> 注意：{text}。\n"

    def table(self) -> str:
        rows = ["| 配置 | 吞吐 (tokens/s) | 显存 (GB) |", "| --- | ---: | ---: |"]
        for _ in range(self.rng.randint(2, 5)):
            tokens, memory = self.rng.randint(100, 9000), self.rng.randint(4, 80)
            rows.append(f"| {self.w.en()} | {tokens} | {memory} |")
        return "\n".join(rows) + "\n"

    def code_block(self) -> str:
        language, code = self.rng.choice(CODE_SNIPPETS)
        name = self.rng.choice(CODE_NAMES)
        replacements = {
            "@NAME@": name,
            "@CNAME@": self.rng.choice(CODE_CLASSES),
            "@SMALLN@": str(self.rng.randint(2, 24)),
            "@MODEL@": self.rng.choice(MODELS),
            "@ZH@": f"{self.w.zh()}{self.rng.choice(ZH_VERBS)}{self.w.zh()}",
        }
        for key, value in replacements.items():
            code = code.replace(key, value)
        while "@N@" in code:
            code = code.replace("@N@", self.rng.choice(NUMBERS[:10]), 1)
        fence = "~~~" if self.rng.random() < 0.1 else "```"
        return f"{fence}{language}\n{code}{fence}\n"

    # -- links ---------------------------------------------------------------

    def link_sentence(self, english: bool) -> str:
        if english:
            return f" See {self.link()} for more."
        return self.rng.choice(
            ("详见 {}。", "参考 {}。", "之前在 {} 里写过。", "（相关：{}）")
        ).format(self.link())

    def link(self) -> str:
        rng = self.rng
        if rng.random() < BROKEN_LINK_RATE:
            return self.broken_link()
        target = self.pick_target()
        roll = rng.random()
        if target is self.note or roll < 0.06:
            return self.anchor_link()
        if roll < 0.50:
            return self.markdown_link(target)
        return self.wikilink(target)

    def pick_target(self) -> NotePlan:
        rng = self.rng
        roll = rng.random()
        if roll < 0.5:
            return self.plans[rng.choice(self.by_topic[self.note.topic.folder])]
        if roll < 0.85:
            return self.plans[int(self.hubs.draw(rng.random()))]
        return self.plans[rng.randrange(len(self.plans))]

    def markdown_link(self, target: NotePlan) -> str:
        self.pending.markdown += 1
        href = relative_href(self.note.rel_path, target.rel_path)
        if "/" not in href and self.rng.random() < 0.2:
            href = "./" + href
        if not href.isascii() and self.rng.random() < 0.5:
            href = urllib.parse.quote(href)  # both forms occur in real notes
        if self.rng.random() < 0.15:
            href += "#" + self.rng.choice(target.headings)[2]
        return f"[{target.title}]({href})"

    def wikilink(self, target: NotePlan) -> str:
        self.pending.wikilink += 1
        roll = self.rng.random()
        if roll < 0.15:
            return f"[[{target.stem}#{self.rng.choice(target.headings)[1]}]]"
        if roll < 0.35:
            return f"[[{target.stem}|{target.title}]]"
        return f"[[{target.stem}]]"

    def anchor_link(self) -> str:
        self.pending.anchor += 1
        _level, text, slug = self.rng.choice(self.note.headings)
        return f"[{text}](#{slug})"

    def broken_link(self) -> str:
        rng = self.rng
        roll = rng.random()
        missing = f"missing-{file_slug(self.w.en()) or 'note'}-{rng.randint(1, 999)}"
        if roll < 0.4:
            self.pending.markdown += 1
            self.pending.broken_target += 1
            return f"[已删除的笔记](../archive/{missing}.md)"
        if roll < 0.8:
            self.pending.wikilink += 1
            self.pending.broken_target += 1
            return f"[[{missing}]]"
        self.pending.anchor += 1
        self.pending.broken_anchor += 1
        return f"[不存在的小节](#no-such-section-{rng.randint(1, 99)})"


def yaml_scalar(text: str) -> str:
    """Plain YAML when safe, else a JSON string (which YAML reads the same)."""
    if re.search(r"[:#\[\]{},&*!|>'\"%@`]", text) or text[:1] in "-?":
        return json.dumps(text, ensure_ascii=False)
    return text


def relative_href(source: str, target: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(source) or ".")


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def generate(out_dir: Path, notes: int, seed: int = 1) -> list[Path]:
    """Write the corpus under ``out_dir`` and return the note paths in generation order."""
    if notes < 1:
        raise ValueError("notes must be at least 1")
    out_dir = Path(out_dir)
    notes_dir = out_dir / "notes"
    _prepare(out_dir, notes_dir)
    writer = Writer(seed)
    plans = writer.plan(notes)
    by_topic: dict[str, list[int]] = {}
    for plan in plans:
        by_topic.setdefault(plan.topic.folder, []).append(plan.index)
    # Hub notes: a Zipf draw over a shuffled order makes a few notes heavily linked.
    hub_order = [str(i) for i in range(len(plans))]
    writer.rng.shuffle(hub_order)
    stats = CorpusStats()
    note_writer = NoteWriter(writer, plans, by_topic, ZipfSampler(hub_order), stats.links)

    paths = []
    for plan in plans:
        data = note_writer.render(plan).encode()
        path = notes_dir / plan.rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        stats.bytes += len(data)
        paths.append(path)
    (out_dir / "kb.yaml").write_text(
        f"# generated by benchmarks/generate_corpus.py --notes {notes} --seed {seed}\n"
        "roots: [notes]\n",
        encoding="utf-8",
        newline="\n",
    )
    _write_marker(out_dir, notes, seed, stats)
    return paths


def _prepare(out_dir: Path, notes_dir: Path) -> None:
    marker = out_dir / MARKER_NAME
    if notes_dir.exists() and any(notes_dir.iterdir()):
        if not marker.exists():
            raise FileExistsError(
                f"{notes_dir} has files this generator did not write; choose an empty OUT_DIR"
            )
        shutil.rmtree(notes_dir)
    # Removed first and written last: its presence means the corpus is complete.
    marker.unlink(missing_ok=True)
    notes_dir.mkdir(parents=True, exist_ok=True)


def _write_marker(out_dir: Path, notes: int, seed: int, stats: CorpusStats) -> None:
    marker = {
        "generator_version": GENERATOR_VERSION,
        "notes": notes,
        "seed": seed,
        "bytes": stats.bytes,
        "long_note": f"notes/{LONG_NOTE_PATH}",
        "links": stats.links.as_dict(),
    }
    (out_dir / MARKER_NAME).write_text(
        json.dumps(marker, indent=2, sort_keys=True) + "\n", encoding="utf-8", newline="\n"
    )


def read_marker(out_dir: Path) -> dict | None:
    """The finished corpus's parameters, or None when absent or unreadable."""
    try:
        return json.loads((Path(out_dir) / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _summary(paths: list[Path], seconds: float) -> str:
    sizes = sorted(p.stat().st_size for p in paths)
    if not sizes:
        return "0 notes"
    folders = len({p.parent for p in paths})
    over = sum(1 for s in sizes if s > 25_000)
    p99 = sizes[min(len(sizes) - 1, int(len(sizes) * 0.99))]
    return (
        f"{len(sizes)} notes in {folders} folders, {sum(sizes) / 1e6:.1f} MB, "
        f"median {statistics.median(sizes) / 1e3:.1f} KB, p99 {p99 / 1e3:.1f} KB, "
        f"max {sizes[-1] / 1e3:.1f} KB, {over} over 25 KB ({100 * over / len(sizes):.1f}%), "
        f"{seconds:.1f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path, help="folder to write kb.yaml and notes/ into")
    parser.add_argument("--notes", type=int, default=10_000, help="number of notes (default 10000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--quiet", action="store_true", help="print nothing")
    args = parser.parse_args(argv)
    if args.notes < 1:
        parser.error("--notes must be at least 1")
    start = time.perf_counter()
    try:
        paths = generate(args.out_dir, args.notes, args.seed)
    except FileExistsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(_summary(paths, time.perf_counter() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
