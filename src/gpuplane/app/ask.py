"""``ask`` as a service: the question checked, answered from the knowledge base (whose index
holds every rule's page too), optionally rephrased by an LLM endpoint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.outcome import AppError, Messages

if TYPE_CHECKING:
    from gpuplane.knowledge.answer import Answer

MAX_QUESTION = 2000  # characters, after whitespace is folded


@dataclass(frozen=True, slots=True)
class AskRequest:
    """``llm``: rephrase with the OpenAI-compatible endpoint of ``GPUPLANE_LLM_BASE_URL`` when it
    is set (the CLI without ``--offline``); MCP never does, its caller being the model."""

    question: str
    max_sections: int = 3
    llm: bool = False


def question_text(question: str) -> str:
    """The question with its whitespace folded; an empty or too long one is an :class:`AppError`."""
    folded = " ".join(question.split())
    if not folded:
        raise AppError("the question is empty")
    if len(folded) > MAX_QUESTION:
        raise AppError(f"the question is longer than {MAX_QUESTION} characters")
    return folded


def run(request: AskRequest, messages: Messages) -> Answer:
    """The answer; a failing LLM call is a note and the offline answer stands."""
    question = question_text(request.question)
    from gpuplane.knowledge import KnowledgeError  # deferred for start-up time
    from gpuplane.knowledge.answer import answer
    from gpuplane.rule_catalog import install_in_knowledge

    install_in_knowledge()
    try:
        result = answer(question, max_sections=request.max_sections)
    except KnowledgeError as exc:
        raise AppError(f"knowledge base: {exc}") from None
    if request.llm and result.hits:
        from gpuplane.knowledge.llm import LLMError, ask_llm, config_from_env  # deferred for start-up time

        cfg = config_from_env()
        if cfg is not None:
            try:
                result.answer = ask_llm(question, result.hits, cfg)
                result.mode = "llm"
            except LLMError as exc:
                messages.note(f"LLM mode failed ({exc}); answering offline.")
    return result
