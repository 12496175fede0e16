#!/usr/bin/python3
"""Dify's document extractor on a spreadsheet (graphon's
_extract_text_from_excel, pandas ExcelFile), to write the expected text of
a fixture: dify_excel.py typed.ods > typed.ods.txt (pandas 1.5, odfpy)."""
import io
import sys

import pandas as pd


def table(df):
    head = "| " + " | ".join(df.columns) + " |"
    sep = "| " + " | ".join("-" * len(c) for c in df.columns) + " |"
    rows = ["| " + " | ".join(map(str, r)) + " |" for _, r in df.iterrows()]
    return "\n".join([head, sep] + rows)


def main():
    data = open(sys.argv[1], "rb").read()
    book = pd.ExcelFile(io.BytesIO(data))
    out = ""
    for name in book.sheet_names:
        try:
            df = book.parse(sheet_name=name)
            df.dropna(how="all", inplace=True)
            df.columns = [str(c).replace("\n", " ") for c in df.columns]
            df = df.applymap(lambda v: " ".join(v.splitlines())
                             if isinstance(v, str) else v)
            out += table(df) + "\n\n"
        except (TypeError, ValueError):
            continue
    sys.stdout.write(out)


main()
