"""Greeting helpers."""


def greet(name):
    return "Hello, " + name + "!"
