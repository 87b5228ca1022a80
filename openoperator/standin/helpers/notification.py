"""Stand-in for Agent Zero's helpers/notification.py: the types and priorities, and a manager that
records what it is given."""

from enum import Enum


class NotificationType(Enum):
    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"
    PROGRESS = "progress"


class NotificationPriority(Enum):
    NORMAL = 10
    HIGH = 20


class NotificationManager:
    def __init__(self):
        self.notifications: list[dict] = []

    def add_notification(self, type, priority, message, title="", detail="", display_time=3, group="", id=""):
        self.notifications.append({
            "type": NotificationType(type).value, "priority": NotificationPriority(priority).value,
            "title": title, "message": message, "detail": detail,
        })
