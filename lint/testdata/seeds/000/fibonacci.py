def tool_fibonacci(n: int) -> dict:
    '''Computes the n-th Fibonacci number.'''
    a, b = 0, 1
    for _ in range(int(n)): a, b = b, a + b
    return {'success': True, 'output': str(a)}
