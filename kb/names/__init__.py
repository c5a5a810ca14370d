"""What notes are called and which note a link means: resolve (the rules, pure logic over a
snapshot of every note's names), below the store that keeps the snapshot and the results.
"""
