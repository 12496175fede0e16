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


PPTX_CT = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>
</Types>"""
P_NS = ('xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships" xmlns:p="http://schemas.openxmlformats.org/'
        'presentationml/2006/main"')
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"


def sp(paras):
    """A shape with a text body of paragraphs (each a list of runs)."""
    body = "".join("<a:p>%s</a:p>" % "".join(paras_run(r) for r in p)
                   for p in paras)
    return ("<p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"Shape\"/><p:cNvSpPr/>"
            "<p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>%s"
            "</p:txBody></p:sp>" % body)


def paras_run(r):
    if r == "<br>":
        return "<a:br/>"
    if r.startswith("#"):
        return ('<a:fld id="{1}" type="slidenum"><a:t>%s</a:t></a:fld>'
                % r[1:])
    return "<a:r><a:t>%s</a:t></a:r>" % r


def slide(tag, shapes):
    return ('<?xml version="1.0" encoding="UTF-8"?><p:%s %s><p:cSld>'
            '<p:spTree>%s</p:spTree></p:cSld></p:%s>'
            % (tag, P_NS, "".join(shapes), tag))


def pptx(path):
    """A pptx written part by part with zipfile, as PowerPoint lays it out
    (no python-pptx in Debian): slide2.xml is shown first, slide1.xml
    second, so the order must come from presentation.xml."""
    import zipfile
    table = ('<p:graphicFrame><a:graphic><a:graphicData><a:tbl>'
             '<a:tr><a:tc><a:txBody><a:p><a:r><a:t>Quarter</a:t></a:r>'
             '</a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Goal'
             '</a:t></a:r></a:p></a:txBody></a:tc></a:tr>'
             '<a:tr><a:tc><a:txBody><a:p><a:r><a:t>Q1</a:t></a:r></a:p>'
             '</a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>上线</a:t>'
             '</a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData>'
             '</a:graphic></p:graphicFrame>')
    parts = {
        "[Content_Types].xml": PPTX_CT,
        "_rels/.rels": '<Relationships xmlns="http://schemas.openxmlformats.'
        'org/package/2006/relationships"><Relationship Id="rId1" Type="%s'
        'officeDocument" Target="ppt/presentation.xml"/></Relationships>'
        % REL,
        "ppt/presentation.xml": '<p:presentation %s><p:sldIdLst>'
        '<p:sldId id="256" r:id="rId7"/><p:sldId id="257" r:id="rId3"/>'
        '</p:sldIdLst></p:presentation>' % P_NS,
        "ppt/_rels/presentation.xml.rels": '<Relationships xmlns="http://'
        'schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId3" Type="%sslide" Target="slides/slide1.xml"/>'
        '<Relationship Id="rId7" Type="%sslide" Target="/ppt/slides/'
        'slide2.xml"/></Relationships>' % (REL, REL),
        "ppt/slides/slide2.xml": slide("sld", [
            sp([["Roadmap ", "2025"]]),
            sp([["第一季度：发布", "<br>", "second line"], ["Tail"]]),
            table]),
        "ppt/slides/_rels/slide2.xml.rels": '<Relationships xmlns="http://'
        'schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId2" Type="%snotesSlide" Target="../notesSlides/'
        'notesSlide1.xml"/></Relationships>' % REL,
        "ppt/notesSlides/notesSlide1.xml": slide("notes", [
            sp([["Mention the budget"]]), sp([["#1"]])]),
        "ppt/slides/slide1.xml": slide("sld", [sp([["Thank you"]]),
                                                sp([["#2"]])]),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), body,
                       zipfile.ZIP_DEFLATED)


def odf():
    from odf.opendocument import (OpenDocumentText, OpenDocumentSpreadsheet,
                                  OpenDocumentPresentation)
    from odf import text, table, draw, presentation
    t = OpenDocumentText()
    t.text.addElement(text.H(outlinelevel=1, text="Annual report"))
    p = text.P(text="Profit grew")
    p.addElement(text.S(c=3))
    p.addText("a lot")
    p.addElement(text.LineBreak())
    p.addText("利润增长")
    t.text.addElement(p)
    lst = text.List()
    item = text.ListItem()
    item.addElement(text.P(text="first point"))
    lst.addElement(item)
    t.text.addElement(lst)
    tb = table.Table(name="T")
    tb.addElement(table.TableColumn(numbercolumnsrepeated=2))
    for row in (("Item", "Cost"), ("Paper", "3")):
        tr = table.TableRow()
        for v in row:
            tc = table.TableCell()
            tc.addElement(text.P(text=v))
            tr.addElement(tc)
        tb.addElement(tr)
    t.text.addElement(tb)
    t.save("report.odt")

    s = OpenDocumentSpreadsheet()
    for name, rows in (("Budget", (("Item", "Cost"), ("Paper", "3"),
                                   ("墨水", "12"))),
                       ("Empty", ())):
        tb = table.Table(name=name)
        for row in rows:
            tr = table.TableRow()
            for v in row:
                tc = table.TableCell()
                tc.addElement(text.P(text=v))
                tr.addElement(tc)
            # the rest of the row, empty, as LibreOffice writes it
            tr.addElement(table.TableCell(numbercolumnsrepeated=1020))
            tb.addElement(tr)
        tr = table.TableRow(numberrowsrepeated=1048570)
        tr.addElement(table.TableCell(numbercolumnsrepeated=1024))
        tb.addElement(tr)
        s.spreadsheet.addElement(tb)
    s.save("budget.ods")

    pr = OpenDocumentPresentation()
    from odf.style import MasterPage, PageLayout
    pl = PageLayout(name="PL")
    pr.automaticstyles.addElement(pl)
    mp = MasterPage(name="Default", pagelayoutname=pl)
    pr.masterstyles.addElement(mp)
    for title, note in (("Welcome 欢迎", "Say hello"), ("Goodbye", None)):
        page = draw.Page(masterpagename=mp)
        fr = draw.Frame(width="20cm", height="3cm", x="1cm", y="1cm")
        tbx = draw.TextBox()
        tbx.addElement(text.P(text=title))
        fr.addElement(tbx)
        page.addElement(fr)
        if note:
            n = presentation.Notes()
            nf = draw.Frame(width="20cm", height="3cm", x="1cm", y="1cm")
            nb = draw.TextBox()
            nb.addElement(text.P(text=note))
            nf.addElement(nb)
            n.addElement(nf)
            page.addElement(n)
        pr.presentation.addElement(page)
    pr.save("talk.odp")


def epub():
    from ebooklib import epub as e
    b = e.EpubBook()
    b.set_identifier("flowcgi-fixture")
    b.set_title("Fixture")
    b.set_language("en")
    c1 = e.EpubHtml(title="One", file_name="one.xhtml", lang="en")
    c1.content = ("<html><body><h1>Chapter one</h1><p>It was a "
                  "<b>bright</b> day.</p><script>var x = 1;</script>"
                  "</body></html>")
    c2 = e.EpubHtml(title="Two", file_name="two.xhtml", lang="zh")
    c2.content = "<html><body><h1>第二章</h1><p>夜幕降临。</p></body></html>"
    b.add_item(c2)
    b.add_item(c1)
    b.toc = (c1, c2)
    b.add_item(e.EpubNcx())
    b.add_item(e.EpubNav())
    b.spine = [c1, c2]
    e.write_epub("book.epub", b)


def mail():
    from email.message import EmailMessage
    from email.utils import format_datetime
    import datetime
    m = EmailMessage()
    m["Subject"] = "季度报告 ready"
    m["From"] = "Li Lei <lilei@example.com>"
    m["To"] = "Han Meimei <han@example.com>"
    m["Date"] = format_datetime(datetime.datetime(
        2024, 3, 1, 9, 30, tzinfo=datetime.timezone.utc))
    m.set_content("Hello,\n\nthe report is attached.\n报告见附件。\n")
    m.add_alternative("<html><body><p>Hello, <b>HTML</b> version.</p>"
                      "</body></html>", subtype="html")
    m.add_attachment(b"%PDF-1.4 not really", maintype="application",
                     subtype="pdf", filename="report.pdf")
    open("mail.eml", "wb").write(bytes(m))
    h = EmailMessage()
    h["Subject"] = "HTML only"
    h["From"] = "news@example.com"
    h.set_content("<html><head><style>p{}</style></head><body><p>Only "
                  "<i>HTML</i> here.</p></body></html>", subtype="html")
    open("html-only.eml", "wb").write(bytes(h))


def xls():
    import datetime
    import xlwt
    wb = xlwt.Workbook(encoding="utf-8")
    ws = wb.add_sheet("Sales")
    date = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    for c, v in enumerate(("Product", "Qty", "Price", "Date")):
        ws.write(0, c, v)
    ws.write(1, 0, "苹果")
    ws.write(1, 1, 3)
    ws.write(1, 2, 1.5)
    ws.write(1, 3, datetime.datetime(2024, 1, 5), date)
    ws.write(2, 0, "Banana")
    ws.write(2, 1, 10)
    ws.write(2, 2, 0.25)
    ws.write(2, 3, datetime.datetime(2024, 2, 29), date)
    ws2 = wb.add_sheet("备注")
    ws2.write(0, 0, "说明")
    ws2.write(1, 0, "繁體字")
    wb.save("sales.xls")


def more():
    """The fixtures of the second round of readers (README)."""
    import docx
    d = docx.Document()
    p = d.add_paragraph()
    r = p.add_run("Line one")
    r.add_break()
    r.add_text("Line two")
    t = d.add_table(rows=2, cols=1)
    t.cell(0, 0).text = "Address"
    c = t.cell(1, 0).paragraphs[0].add_run("Street 1")
    c.add_break()
    c.add_text("城市")
    d.save("breaks.docx")
    pptx("deck.pptx")
    odf()
    epub()
    mail()
    xls()
    gbk = ("中文编码测试：这是一个用国标码保存的文本文件。\n"
           "文档提取器应当把它转换成统一码，而不是乱码。\n") * 3
    open("gbk.txt", "wb").write(gbk.encode("gbk"))
    big5 = ("繁體中文測試：這是一個以大五碼儲存的文字檔案。\n"
            "文件擷取器應當把它轉換成統一碼，而不是亂碼。\n") * 3
    open("big5.txt", "wb").write(big5.encode("big5"))


def big(folder):
    """The large files of the documents bench (not committed), a few MB
    each: big.docx, big.xlsx, big.pptx, big.odt, big.epub, big.eml,
    big.xls, big-gbk.txt."""
    import os
    import zipfile
    line = "the quick brown fox jumps over the lazy dog 0123456789 "
    zh = "文档提取器把每一种文件变成文本。"
    import docx
    d = docx.Document()
    for i in range(40000):
        d.add_paragraph("%d %s%s" % (i, line, zh))
    t = d.add_table(rows=50, cols=4)
    for r in range(50):
        for c in range(4):
            t.cell(r, c).text = "r%dc%d" % (r, c)
    d.save(os.path.join(folder, "big.docx"))
    import openpyxl
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Data")
    ws.append(["id", "name", "price", "note"])
    for i in range(60000):
        ws.append([i, "item %d" % i, i * 0.25, zh])
    wb.save(os.path.join(folder, "big.xlsx"))
    import xlwt
    xb = xlwt.Workbook(encoding="utf-8")
    xs = xb.add_sheet("Data")
    for c, v in enumerate(("id", "name", "price", "note")):
        xs.write(0, c, v)
    for i in range(1, 60000):
        xs.write(i, 0, i)
        xs.write(i, 1, "item %d" % i)
        xs.write(i, 2, i * 0.25)
        xs.write(i, 3, zh)
    xb.save(os.path.join(folder, "big.xls"))
    n = 1000
    ids = "".join('<p:sldId id="%d" r:id="rId%d"/>' % (256 + i, i + 1)
                  for i in range(n))
    rels = "".join('<Relationship Id="rId%d" Type="%sslide" Target="slides/'
                   'slide%d.xml"/>' % (i + 1, REL, i + 1) for i in range(n))
    with zipfile.ZipFile(os.path.join(folder, "big.pptx"), "w",
                         zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", PPTX_CT)
        z.writestr("ppt/presentation.xml", '<p:presentation %s><p:sldIdLst>'
                   '%s</p:sldIdLst></p:presentation>' % (P_NS, ids))
        z.writestr("ppt/_rels/presentation.xml.rels", '<Relationships>%s'
                   '</Relationships>' % rels)
        for i in range(n):
            z.writestr("ppt/slides/slide%d.xml" % (i + 1), slide("sld", [
                sp([["Slide %d" % (i + 1)]]),
                sp([["%s%s" % (line, zh)] for _ in range(40)])]))
    from odf.opendocument import OpenDocumentText
    from odf import text
    o = OpenDocumentText()
    for i in range(40000):
        o.text.addElement(text.P(text="%d %s%s" % (i, line, zh)))
    o.save(os.path.join(folder, "big.odt"))
    from ebooklib import epub as e
    b = e.EpubBook()
    b.set_identifier("bench")
    b.set_title("Bench")
    chapters = []
    for c in range(200):
        ch = e.EpubHtml(title="C%d" % c, file_name="c%d.xhtml" % c)
        ch.content = "<html><body>%s</body></html>" % "".join(
            "<p>%d %s%s</p>" % (i, line, zh) for i in range(200))
        b.add_item(ch)
        chapters.append(ch)
    b.add_item(e.EpubNcx())
    b.add_item(e.EpubNav())
    b.spine = chapters
    e.write_epub(os.path.join(folder, "big.epub"), b)
    from email.message import EmailMessage
    m = EmailMessage()
    m["Subject"] = "bench"
    m["From"] = "a@example.com"
    m.set_content("".join("%d %s%s\n" % (i, line, zh) for i in range(40000)),
                  cte="base64")
    open(os.path.join(folder, "big.eml"), "wb").write(bytes(m))
    open(os.path.join(folder, "big-gbk.txt"), "wb").write("".join(
        "%d %s%s\n" % (i, line, zh) for i in range(60000)).encode("gbk"))


def stream():
    """wide.xlsx: the xlsx reader's streaming checked against the output
    of the earlier whole-tree reader (wide.xlsx.txt): three sheets, 1200
    rows of every value kind, gaps, NA strings, dates, booleans."""
    import datetime
    import openpyxl
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Mixed"
    ws.append(["id", None, "price", "price", "when", "flag", "note"])
    for i in range(1200):
        row = [i, "item %d" % i if i % 7 else None, i * 0.1 if i % 5 else i,
               1e17 * i if i % 11 == 0 else -i / 3.0,
               datetime.datetime(2024, 1, 1) + datetime.timedelta(
                   hours=i * 7) if i % 13 else None,
               bool(i % 2) if i % 17 else None,
               ("line\none %d" % i) if i % 3 == 0 else
               ("NA" if i % 3 == 1 else "文本 %d" % i)]
        ws.append(row)
        if i % 400 == 399:
            ws.append([])
    ws2 = wb.create_sheet("整数")
    ws2.append(["a", "b"])
    for i in range(800):
        ws2.append([i, i * 2])
    ws3 = wb.create_sheet("Dates")
    ws3.append(["t", "d"])
    for i in range(1, 300):
        c = ws3.cell(row=i + 1, column=1, value=i / 300.0)
        c.number_format = "hh:mm:ss"
        c = ws3.cell(row=i + 1, column=2, value=40000 + i)
        c.number_format = "yyyy-mm-dd"
    wb.save("wide.xlsx")


def ods():
    """typed.ods: cells typed as LibreOffice writes them (office:value-type
    and its value attribute beside the shown text), to hold the ods reader
    to pandas' rules (typed.ods.txt: what pandas 1.5 with odfpy gives with
    Dify's code, made by dify_excel.py)."""
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf import text, table
    s = OpenDocumentSpreadsheet()

    def cell(kind, shown, rep=1, **value):
        tc = table.TableCell(valuetype=kind, numbercolumnsrepeated=rep,
                             **value) if kind else \
            table.TableCell(numbercolumnsrepeated=rep)
        if shown is not None:
            for line in shown.split("\n"):
                tc.addElement(text.P(text=line))
        return tc

    def row(cells, rep=1):
        tr = table.TableRow(numberrowsrepeated=rep)
        for c in cells:
            tr.addElement(c)
        return tr

    tb = table.Table(name="Typed")
    tb.addElement(row([cell("string", h) for h in (
        "name", "qty", "price", "share", "when", "at", "ok", "note")] +
        [cell(None, None, 1000)]))
    tb.addElement(row([
        cell("string", "苹果"), cell("float", "3", value="3"),
        cell("currency", "$1.50", value="1.5", currency="USD"),
        cell("percentage", "25%", value="0.25"),
        cell("date", "2024-01-05", datevalue="2024-01-05"),
        cell("time", "13:30:00", timevalue="PT13H30M00S"),
        cell("boolean", "TRUE", booleanvalue="true"),
        cell("string", "two\nlines")]))
    tb.addElement(row([
        cell("string", "Banana"), cell(None, None),
        cell("float", "0.1", value="0.1"),
        cell("percentage", "100%", value="1"),
        cell("date", "2024-02-29 13:30", datevalue="2024-02-29T13:30:00"),
        cell(None, None), cell("boolean", "FALSE", booleanvalue="false"),
        cell("string", "NA")]))
    tb.addElement(row([cell(None, None, 8)]))
    tb.addElement(row([
        cell("string", "#N/A"), cell("float", "7", value="7"),
        cell("float", "2", value="2"), cell(None, None, 3),
        cell("boolean", "TRUE", booleanvalue="true"),
        cell("string", "x", 1)], rep=2))
    tb.addElement(row([cell(None, None, 1024)], rep=1048570))
    s.spreadsheet.addElement(tb)
    s.spreadsheet.addElement(table.Table(name="空"))
    tb = table.Table(name="Ints")
    tb.addElement(row([cell("string", "n"), cell("float", "1", value="1")]))
    for i in range(3):
        tb.addElement(row([cell("float", str(i), value=str(i)),
                           cell("string", "r%d" % i, 2)]))
    s.spreadsheet.addElement(tb)
    s.save("typed.ods")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "ods":
        ods()
        return
    if len(sys.argv) > 1 and sys.argv[1] == "stream":
        stream()
        return
    if len(sys.argv) > 2 and sys.argv[1] == "big":
        big(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "more":
        more()
        return
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
