codemode.math_evaluate({ expression: '2 ** 10 + 3 * 7' }).then((r) => r.value * 2)
