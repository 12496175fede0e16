#!/usr/bin/python3
"""Makes the document fixtures of this folder (see README): run from it,
with Debian's python3-reportlab and python3-docx and fonts-wqy-microhei."""
import sys

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas
from reportlab.lib import pdfencrypt

WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
pdfmetrics.registerFont(TTFont("WQY", WQY, subfontIndex=0))


def pdf(path, pages, encrypt=None):
    c = canvas.Canvas(path, pagesize=A4, encrypt=encrypt, invariant=1)
    for lines in pages:
        y = 780
        for font, text in lines:
            c.setFont(font, 14)
            c.drawString(72, y, text)
            y -= 24
        c.showPage()
    c.save()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "long":
        # the bench's PDF: n pages of text, not committed
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
        pages = []
        for p in range(n):
            pages.append([("Helvetica", "Page %d line %d: the quick brown "
                           "fox jumps over the lazy dog, 0123456789."
                           % (p + 1, i + 1)) for i in range(40)])
        pdf(sys.argv[2], pages)
        return
    pdf("two-pages.pdf", [
        [("Helvetica", "Quarterly report"),
         ("Helvetica", "Revenue rose by 12 percent.")],
        [("WQY", "第二页：文档提取器"),
         ("WQY", "繁體中文與日本語のテキスト")],
    ])
    pdf("encrypted.pdf", [[("Helvetica", "secret text")]],
        encrypt=pdfencrypt.StandardEncryption("user-pw", "owner-pw"))
    data = open("two-pages.pdf", "rb").read()
    open("truncated.pdf", "wb").write(data[:len(data) // 3])

    import docx
    d = docx.Document()
    d.add_paragraph("Meeting notes")
    d.add_paragraph("会议纪要：下周发布")
    t = d.add_table(rows=2, cols=2)
    t.cell(0, 0).text = "Name"
    t.cell(0, 1).text = "Role"
    t.cell(1, 0).text = "李雷"
    t.cell(1, 1).text = "Engineer"
    d.save("notes.docx")

    import datetime
    import openpyxl
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Product", "Qty", "Price", "Date"])
    ws.append(["苹果", 3, 1.5, datetime.datetime(2024, 1, 5)])
    ws.append(["Banana", 10, 0.25, datetime.datetime(2024, 2, 29, 13, 30)])
    ws.append([])
    ws.append(["Two\nlines", 7, 2, datetime.datetime(2023, 12, 31)])
    ws2 = wb.create_sheet("备注")
    ws2.append(["说明", "Count", None, "Flag"])
    ws2.append(["繁體字", 1, None, True])
    ws2.append(["N/A", None, None, False])
    ws2.append(["x", 2, "extra", True])
    wb.save("sales.xlsx")


main()
