"""The daily workbook's sheets: their names, in the order the workbook holds them.

One module writes each sheet or family of sheets (`dmf_watch.reports.daily_report` calls them
in order): dashboard.py the first sheet and the hidden series behind its charts, load_status.py
the dashboard's verdict and rejected-day boxes, action_items.py the action list, events.py the
NEW/CHANGED/WITHDRAWN sheets, watchlist.py, timelines.py the history sheet, signals.py,
operations.py and proposals.py. The weekly workbook (`dmf_watch.reports.weekly_report`) reuses
the event columns, the action lines and the operations sheet.
"""

# Korean; ≤ 31 characters, no []:*?/\ (Excel's rules for a sheet name).
DASHBOARD = "요약"
ACTIONS = "조치항목"
NEW = "신규"
CHANGED = "변경"
WITHDRAWN = "취하"
WATCHLIST = "관심목록"
SIGNALS = "무결성신호"
OPERATIONS = "운영"
PROPOSALS = "AI제안"
HISTORY = "이력"  # the timelines of the day's watchlist registrations
TREND_DATA = "추세데이터"  # hidden: the series behind the dashboard sparklines and chart
SHEETS = (DASHBOARD, ACTIONS, NEW, CHANGED, WITHDRAWN, WATCHLIST, HISTORY, SIGNALS, OPERATIONS, PROPOSALS, TREND_DATA)
