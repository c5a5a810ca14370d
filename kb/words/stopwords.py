"""Words that say how a sentence is built, not what it is about: one list for search
(a query's function words carry no requirement) and for related notes (they are never
evidence that two notes share a subject).

The Chinese list holds function words, question words and the filler a technical text
uses everywhere (一个, 需要, 进行, 看到, 小结); the English list is the usual short one. Both are
compared after NFKC and case folding (``kb.words.tokenize.normalise``)."""

from __future__ import annotations

from functools import cache

_CHINESE = """
的 地 得 了 着 过 和 与 及 以及 或 或者 而 而且 并 并且 且 是 不是 就是 还是 也是 都是
在 有 没有 没 就 都 也 还 又 再 才 很 太 更 最 非常 比较 十分 特别 一些 一下 一点 一种 一样
一个 一般 一直 一起 一定 这 那 这个 那个 这些 那些 这样 那样 这种 那种 这里 那里 此 其 其中
其他 其它 其实 我 你 他 她 它 我们 你们 他们 她们 它们 自己 大家 咱们 之 于 以 为 为了 把 被
对 对于 关于 从 到 向 往 跟 给 由 让 使 将 用 按 按照 根据 通过 进行 可以 可能 能 能够 会
要 需要 应该 必须 得到 已经 曾经 正在 将要 因为 所以 因此 但 但是 可是 然而 不过 如果 假如 虽然
即使 只要 只有 除了 然后 接着 于是 另外 此外 而是 以后 之后 之前 以前 时候 的时候 时 中 上 下
里 内 外 前 后 间 之间 方面 方式 等 等等 什么 怎么 怎样 怎么样 如何 为什么 为何 哪 哪个 哪些
哪里 哪儿 谁 多少 几 是否 能否 可否 有没有 是不是 吗 呢 吧 啊 呀 哦 嘛 么 个 些 所 所有 每 每个
各 各种 任何 某 某些 即 即可 则 便 之所以 在于 来说 来讲 而言 来 去 做 看 说 想 知道 觉得
认为 发现 出现 存在 具有 包括 主要 基本 相关 进一步 简单 直接 同时 不同 相同 很多 许多 大量
不断 问 答 啦 不 别 不会 不能 不要 嗯 唉
看到 看看 这一 那一 一次 这次 一组 一行 一句 一篇 这篇 本文 上面 下面 如下 以下 以上 几个 首先
其次 最后 当然 确实 总之 例如 比如 显然 似乎 只是 还有 真的 那么 这么 不会 不能 可见 只能 不要
不用 之类 东西 小结 好处 后续 回顾 注意 部分 情况 去掉
"""

_ENGLISH = """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves
"""

STOP_WORDS: frozenset[str] = frozenset(_CHINESE.split()) | frozenset(_ENGLISH.split())


def is_stop_word(word: str) -> bool:
    """Whether ``word`` (already normalised: NFKC, case-folded) is a function word."""
    return word in STOP_WORDS


# -- general words: what a dictionary calls everyday vocabulary -------------------------

# The classes of rjieba's dictionary (the jieba/ICTCLAS tag set) that hold function words,
# not subjects: numerals (两个, 几种), measure words (分钟), pronouns (每次), prepositions,
# conjunctions, particles, modal words, interjections, onomatopoeia, localisers (下面)
# and time words (当前, 如下). Adverbs are left out: the dictionary tags 同步 as one.
FUNCTION_CLASSES = frozenset("mqrpcuyeoft")
# A word the dictionary counts this often (in its ~60 million words of general Chinese;
# about 75 per million) is everyday vocabulary (作为, 时间, 表示, 讨论, 核心): two notes
# sharing it share no subject. Technical words sit far below (缓存 245, 分布式 63,
# 一致性 140); the price is that a few common words that are also subjects (事务, 协议)
# no longer count as evidence, where the subject's own rarer words (补偿, 一致性) do.
GENERAL_FREQUENCY = 4500
# A function class counts from this frequency on: the dictionary tags rare technical words
# by their first character too (二分 and 数列 as numerals, 过期 as a time word, 毫秒 as a
# measure word), where a function word in use (几种 1738, 如下 2153) is common.
FUNCTION_FREQUENCY = 1000


@cache
def is_general_word(word: str) -> bool:
    """Whether a Chinese word (normalised) is one a dictionary lists as everyday vocabulary
    or as a function word in use (GENERAL_FREQUENCY, FUNCTION_CLASSES): never a sign that
    two notes share a subject. Words the dictionary does not know are not general."""
    if word in STOP_WORDS:
        return True
    # Imported here: rjieba costs ~110 ms to load; only related notes and indexing ask.
    import rjieba

    if not rjieba.has_word(word):
        return False
    frequency = rjieba.suggest_freq(word)
    if frequency >= GENERAL_FREQUENCY:
        return True
    tagged = rjieba.tag(word, hmm=False)
    if frequency < FUNCTION_FREQUENCY or len(tagged) != 1:
        return False
    tag = tagged[0][1]
    return tag[:1] in FUNCTION_CLASSES
