"""Hello world for nsrun: shows where it runs and computes something small."""
import os
import platform
import sys


def primes(n):
    """The first n primes, by trial division."""
    found = []
    k = 2
    while len(found) < n:
        if all(k % p for p in found if p * p <= k):
            found.append(k)
        k += 1
    return found


print("Hello from nsrun!")
print(f"system: {platform.system()}, python {sys.version_info.major}")
print(f"host: {platform.node()}, uid {os.getuid()}, cwd {os.getcwd()}")
print(f"script: {os.path.abspath(__file__)}")
print(f"first 10 primes: {primes(10)}")
print(f"sum of squares 1..100: {sum(i * i for i in range(1, 101))}")
if len(sys.argv) > 1:
    print(f"arguments: {sys.argv[1:]}")
