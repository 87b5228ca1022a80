"""Stand-in for Agent Zero's agent.AgentContext: only its notification manager."""

from helpers.notification import NotificationManager


class AgentContext:
    _notifications = NotificationManager()

    @classmethod
    def get_notification_manager(cls) -> NotificationManager:
        return cls._notifications
