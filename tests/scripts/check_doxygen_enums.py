#!/usr/bin/env python3
"""Fails when an enum value in Doxygen's XML output has no description.
Doxygen's WARN_IF_UNDOCUMENTED names undocumented functions, types, macros
and struct members, but not enum values (doxygen 1.9), so test_docs_doxygen
runs this over the XML of the same run. Prints one line per undocumented
value:
  header:line: NAME (the line of its enum)
Usage: check_doxygen_enums.py XML_DIR"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def text(node):
    return "".join(node.itertext()).strip() if node is not None else ""


def main(xml_dir):
    seen = set()
    missing = 0
    for path in sorted(glob.glob(os.path.join(xml_dir, "*.xml"))):
        for enum in ET.parse(path).getroot().iter("memberdef"):
            if enum.get("kind") != "enum":
                continue
            where = enum.find("location")
            for value in enum.iter("enumvalue"):
                if value.get("id") in seen:
                    continue
                seen.add(value.get("id"))
                if text(value.find("briefdescription")) or text(value.find("detaileddescription")):
                    continue
                missing += 1
                print("%s:%s: %s" % (where.get("file"), where.get("line"), value.findtext("name")))
    if not seen:
        print("no enum values in %s: not Doxygen's XML output" % xml_dir)
        return 1
    if missing:
        print("%d of %d enum values have no Doxygen comment (/**< ... */ after them)"
              % (missing, len(seen)))
        return 1
    print("ok: %d enum values, each with a Doxygen comment" % len(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
